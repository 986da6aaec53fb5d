import { PrismaService } from '@switchyard/db';
import { query } from '@switchyard/testing';
import { AuditRepository } from './audit.repository.js';
import { ChannelStore } from './channel-store.js';
import { ChannelsRepository } from './channels.repository.js';

// The router's automatic status changes, against the real schema: only enabled ↔
// auto_disabled, each bumping the channel's version and audited with the router as actor.

const databaseUrl = () => process.env.DATABASE_URL!;

describe('ChannelStore (the router’s writes)', () => {
  const prisma = new PrismaService({ url: databaseUrl(), poolSize: 2 });
  const audit = new AuditRepository(prisma);
  const store = new ChannelStore(prisma, audit);
  const channels = new ChannelsRepository(prisma);
  let sequence = 0;

  afterAll(() => prisma.$disconnect());

  async function channelWithKeys(count: number): Promise<{ id: number; keys: number[] }> {
    sequence += 1;
    const created = await channels.create(
      prisma,
      {
        name: `store ${sequence}`,
        kind: 'aggregated',
        baseUrl: 'http://127.0.0.1:1',
        models: ['m'],
      },
      Array.from({ length: count }, (_, i) => ({
        secretCiphertext: `sealed-${sequence}-${i}`,
        fingerprint: `${sequence}-${i}`.padEnd(64, '0'),
        lastFour: `k${i}`.padStart(4, '0'),
      })),
    );
    return { id: created.id, keys: created.keys.map((k) => k.id) };
  }

  async function state(channelId: number) {
    const channel = await channels.findById(channelId);
    return {
      channel: channel!.status,
      version: channel!.version,
      keys: channel!.keys.map((k) => k.status),
    };
  }

  const auditOf = (keyId: number) =>
    query<{ actorId: number | null; actorName: string; action: string; details: unknown }>(
      databaseUrl(),
      `SELECT "actorId", "actorName", action, details FROM "AuditLog"
        WHERE "targetType" = 'channel_key' AND "targetId" = $1 ORDER BY id`,
      [String(keyId)],
    );

  it('disables a banned key, then its channel with the last key, each move versioned and audited', async () => {
    const { id, keys } = await channelWithKeys(2);
    expect(await state(id)).toEqual({
      channel: 'enabled',
      version: 1,
      keys: ['enabled', 'enabled'],
    });

    expect(await store.autoDisableKey(keys[0]!, 'banned: 401')).toBe(true);
    expect(await state(id)).toEqual({
      channel: 'enabled',
      version: 2,
      keys: ['auto_disabled', 'enabled'],
    });
    expect(await store.autoDisableKey(keys[0]!, 'banned again')).toBe(false);
    expect((await state(id)).version).toBe(2);

    expect(await store.autoDisableKey(keys[1]!, 'banned: 403')).toBe(true);
    expect(await state(id)).toEqual({
      channel: 'auto_disabled',
      version: 3,
      keys: ['auto_disabled', 'auto_disabled'],
    });
    expect(await auditOf(keys[1]!)).toEqual([
      {
        actorId: null,
        actorName: 'router',
        action: 'channel.key_auto_disable',
        details: { channelId: id, reason: 'banned: 403', channelDisabled: true },
      },
    ]);

    expect(await store.reEnableKey(keys[1]!)).toBe(true);
    expect(await state(id)).toEqual({
      channel: 'enabled',
      version: 4,
      keys: ['auto_disabled', 'enabled'],
    });
    expect((await auditOf(keys[1]!)).map((entry) => entry.action)).toEqual([
      'channel.key_auto_disable',
      'channel.key_auto_enable',
    ]);
  });

  it('never moves what an administrator disabled, key or channel', async () => {
    const { id, keys } = await channelWithKeys(2);
    await channels.updateKey(prisma, keys[0]!, { status: 'disabled' });
    expect(await store.autoDisableKey(keys[0]!, 'banned')).toBe(false);
    expect(await store.reEnableKey(keys[0]!)).toBe(false);
    expect(await auditOf(keys[0]!)).toEqual([]);

    expect(await store.autoDisableKey(keys[1]!, 'banned')).toBe(true);
    await channels.updateAtVersion(prisma, id, (await state(id)).version, { status: 'disabled' });
    expect(await store.reEnableKey(keys[1]!)).toBe(true);
    expect(await state(id)).toMatchObject({ channel: 'disabled', keys: ['disabled', 'enabled'] });
  });

  it('routes over what an administrator has not disabled, with effective limits', async () => {
    const { id, keys } = await channelWithKeys(2);
    await channels.updateAtVersion(prisma, id, 1, { rpmLimit: 60 });
    await channels.updateKey(prisma, keys[0]!, { rpmLimit: 5 });
    await channels.updateKey(prisma, keys[1]!, { status: 'disabled' });
    const routable = (await store.loadRoutable()).find((c) => c.id === id);
    expect(routable?.keys.map((k) => ({ id: k.id, rpm: k.rpm }))).toEqual([
      { id: keys[0], rpm: 5 },
    ]);
  });
});
