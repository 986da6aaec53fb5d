import { SecretCipher, sha256Hex } from '@switchyard/security';
import { waitFor, query } from '@switchyard/testing';
import {
  AdminHarness,
  channelBody,
  randomSuffix,
  type Session,
} from '../testing/admin-harness.fixture.js';

// Channels through the HTTP API, with the rows, the audit trail and the events checked.

interface ChannelView {
  id: number;
  version: number;
  status: string;
  statusReason: string | null;
  baseUrl: string;
  keys: { id: number; lastFour: string; status: string; limits: Record<string, number | null> }[];
  [field: string]: unknown;
}

/** AWS's documented example key pair, in the bedrock key format. */
const AWS_KEY_PAIR = 'AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

describe('channels', () => {
  let h: AdminHarness;
  let admin: Session;
  let api: ReturnType<AdminHarness['api']>;

  beforeAll(async () => {
    h = await AdminHarness.start({ name: 'channels' });
    admin = await h.session('admin');
    api = h.api(admin.token);
  });

  afterAll(async () => {
    await h.close();
  });

  const create = async (overrides: Record<string, unknown> = {}): Promise<ChannelView> =>
    (await api.post('/api/channels', channelBody(overrides)).expect(201)).body as ChannelView;

  it('creates a channel with its keys sealed, shown only by their last four characters', async () => {
    const secret = `upstream-key-${randomSuffix()}-WXYZ`;
    const response = await api
      .post(
        '/api/channels',
        channelBody({
          name: 'Relay A',
          kind: 'aggregated',
          baseUrl: 'https://relay.example.com/v1/',
          keys: [secret],
          models: ['gpt-4o', 'gpt-4-gizmo-*'],
          modelMapping: { 'gpt-4o': 'gpt-4o-2024-08-06' },
          priority: 5,
          weight: 3,
          groups: ['default', 'vip'],
          limits: { rpm: 60, tpm: 100000, concurrency: 4 },
        }),
      )
      .expect(201);
    const channel = response.body as ChannelView;
    expect(channel).toMatchObject({
      name: 'Relay A',
      kind: 'aggregated',
      baseUrl: 'https://relay.example.com',
      models: ['gpt-4o', 'gpt-4-gizmo-*'],
      modelMapping: { 'gpt-4o': 'gpt-4o-2024-08-06' },
      priority: 5,
      weight: 3,
      groups: ['default', 'vip'],
      limits: { rpm: 60, tpm: 100000, concurrency: 4 },
      status: 'enabled',
      statusReason: null,
      usedQuota: 0,
      version: 1,
    });
    expect(channel.keys).toEqual([
      {
        id: expect.any(Number),
        lastFour: 'WXYZ',
        status: 'enabled',
        statusReason: null,
        limits: { rpm: null, tpm: null, concurrency: null },
        usedQuota: 0,
        requestCount: 0,
        createdAt: expect.any(String),
      },
    ]);
    expect(response.text).not.toContain(secret);

    const [row] = await query<{ secretCiphertext: string; fingerprint: string; lastFour: string }>(
      h.databaseUrl,
      `SELECT "secretCiphertext", fingerprint, "lastFour" FROM "ChannelKey" WHERE "channelId" = $1`,
      [channel.id],
    );
    expect(row?.secretCiphertext).not.toContain(secret);
    expect(new SecretCipher(h.env.SECRET_KEYS).open(row!.secretCiphertext)).toBe(secret);
    expect(row?.fingerprint).toBe(sha256Hex(secret));

    await h.event('channel.changed', (e) => e.channelId === channel.id && e.action === 'created');
    const audit = await h.auditOf('channel', channel.id);
    expect(audit).toEqual([
      expect.objectContaining({
        action: 'channel.create',
        actorId: admin.id,
        actorName: admin.username,
        clientIp: h.clientIp,
      }),
    ]);
    expect(JSON.stringify(audit)).not.toContain(secret);
  });

  it('reads, and answers unknown or malformed ids', async () => {
    const channel = await create();
    const read = await api.get(`/api/channels/${channel.id}`).expect(200);
    expect(read.body).toEqual(channel);
    const missing = await api.get('/api/channels/2147483000').expect(404);
    expect(missing.body.error.code).toBe('not_found');
    const malformed = await api.get('/api/channels/abc').expect(400);
    expect(malformed.body.error).toMatchObject({
      code: 'validation_failed',
      fields: [{ field: 'id', message: 'id must be a positive integer' }],
    });
  });

  it('records the provider a channel speaks and its settings; openai by default', async () => {
    const plain = await create();
    expect(plain).toMatchObject({ provider: 'openai', providerSettings: {} });
    const anthropic = await create({
      provider: 'anthropic',
      providerSettings: { anthropicVersion: '2023-06-01' },
    });
    expect(anthropic).toMatchObject({
      provider: 'anthropic',
      providerSettings: { anthropicVersion: '2023-06-01' },
    });
    // Bedrock signs with an AWS key pair: the channel's keys must become one.
    const keptKeys = await api
      .patch(`/api/channels/${anthropic.id}`, {
        version: anthropic.version,
        provider: 'bedrock',
        providerSettings: { region: 'eu-west-1' },
      })
      .expect(400);
    expect(keptKeys.body.error.fields).toEqual([
      {
        field: 'keys',
        message:
          'a bedrock key is ACCESS_KEY_ID:SECRET_ACCESS_KEY, optionally followed by :SESSION_TOKEN (1 of 1 is not)',
      },
    ]);
    const updated = await api
      .patch(`/api/channels/${anthropic.id}`, {
        version: anthropic.version,
        provider: 'bedrock',
        providerSettings: { region: 'eu-west-1' },
        keys: [AWS_KEY_PAIR],
      })
      .expect(200);
    expect(updated.body).toMatchObject({
      provider: 'bedrock',
      providerSettings: { region: 'eu-west-1' },
    });
    const azure = await create({
      provider: 'azure',
      providerSettings: { apiVersion: '2025-04-01-preview' },
    });
    expect(azure).toMatchObject({
      provider: 'azure',
      providerSettings: { apiVersion: '2025-04-01-preview' },
    });
    expect(await create({ provider: 'gemini' })).toMatchObject({
      provider: 'gemini',
      providerSettings: {},
    });
    const bad = await api
      .post(
        '/api/channels',
        channelBody({
          provider: 'cohere',
          providerSettings: { region: 'moon', apiVersion: 'latest', extra: 1 },
        }),
      )
      .expect(400);
    expect(bad.body.error.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'provider',
      'providerSettings.apiVersion',
      'providerSettings.extra',
      'providerSettings.region',
    ]);
  });

  it('takes a bedrock channel with an AWS key pair and a region, refusing anything else with a clear 400', async () => {
    // STS session tokens run to a thousand characters and more.
    const withToken = `${AWS_KEY_PAIR}:IQoJb3JpZ2luX2Vj${'A'.repeat(1800)}EXAMPLESESSIONTOKEN`;
    const bedrock = await create({
      provider: 'bedrock',
      providerSettings: { region: 'us-west-2' },
      baseUrl: 'https://bedrock-runtime.us-west-2.amazonaws.com',
      keys: [AWS_KEY_PAIR, withToken],
    });
    expect(bedrock).toMatchObject({
      provider: 'bedrock',
      providerSettings: { region: 'us-west-2' },
      keys: [{ lastFour: 'EKEY' }, { lastFour: 'OKEN' }],
    });
    expect(JSON.stringify(bedrock)).not.toContain('wJalrXUtnFEMI');
    const refused = await api
      .post(
        '/api/channels',
        channelBody({ provider: 'bedrock', keys: ['sk-not-an-aws-key-pair', AWS_KEY_PAIR] }),
      )
      .expect(400);
    expect(refused.body.error).toMatchObject({
      code: 'validation_failed',
      fields: [
        {
          field: 'providerSettings.region',
          message: 'a bedrock channel needs providerSettings.region, like us-east-1',
        },
        {
          field: 'keys',
          message:
            'a bedrock key is ACCESS_KEY_ID:SECRET_ACCESS_KEY, optionally followed by :SESSION_TOKEN (1 of 2 is not)',
        },
      ],
    });
    expect(refused.text).not.toContain('sk-not-an-aws-key-pair');
  });

  it('lists with paging and filters by status, model (exact, prefix* or *suffix), group, kind and name', async () => {
    const group = `g-${randomSuffix()}`;
    const a = await create({ name: 'alpha one', groups: [group], models: ['gpt-4o'], priority: 3 });
    const b = await create({
      name: 'beta two',
      groups: [group, 'default'],
      models: ['gpt-4-gizmo-*'],
      kind: 'aggregated',
      priority: 2,
    });
    const c = await create({ name: 'gamma three', groups: [group], models: ['claude-3'] });
    await api.post(`/api/channels/${c.id}/disable`).expect(200);
    const d = await create({
      name: 'delta four',
      groups: [group],
      models: ['*-all'],
      priority: -1,
    });

    const ids = async (query: string) => {
      const response = await api.get(`/api/channels?group=${group}&${query}`).expect(200);
      return {
        ids: (response.body.items as ChannelView[]).map((x) => x.id),
        total: response.body.total as number,
      };
    };
    expect(await ids('')).toEqual({ ids: [a.id, b.id, c.id, d.id], total: 4 });
    expect(await ids('pageSize=2&page=2')).toEqual({ ids: [c.id, d.id], total: 4 });
    expect(await ids('status=disabled')).toEqual({ ids: [c.id], total: 1 });
    expect(await ids('status=enabled')).toEqual({ ids: [a.id, b.id, d.id], total: 3 });
    expect(await ids('model=gpt-4o')).toEqual({ ids: [a.id], total: 1 });
    expect(await ids('model=gpt-4-gizmo-g-abc123')).toEqual({ ids: [b.id], total: 1 });
    expect(await ids('model=gpt-4-all')).toEqual({ ids: [d.id], total: 1 });
    expect(await ids('model=gpt-4-gizmo-all')).toEqual({ ids: [b.id, d.id], total: 2 });
    expect(await ids('kind=aggregated')).toEqual({ ids: [b.id], total: 1 });
    expect(await ids('name=TWO')).toEqual({ ids: [b.id], total: 1 });

    const bad = await api.get('/api/channels?pageSize=101&status=sleeping').expect(400);
    expect(bad.body.error.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'pageSize',
      'status',
    ]);
  });

  it('updates with optimistic versioning', async () => {
    const channel = await create();
    const updated = await api
      .patch(`/api/channels/${channel.id}`, {
        version: 1,
        priority: 9,
        models: ['gpt-4o', 'o1-*'],
        limits: { rpm: 10 },
      })
      .expect(200);
    expect(updated.body).toMatchObject({
      version: 2,
      priority: 9,
      models: ['gpt-4o', 'o1-*'],
      limits: { rpm: 10, tpm: null, concurrency: null },
    });
    await h.event('channel.changed', (e) => e.channelId === channel.id && e.action === 'updated');

    const stale = await api
      .patch(`/api/channels/${channel.id}`, { version: 1, priority: 1 })
      .expect(409);
    expect(stale.body.error.code).toBe('version_conflict');
    const unversioned = await api.patch(`/api/channels/${channel.id}`, { priority: 1 }).expect(400);
    expect(unversioned.body.error.fields[0].field).toBe('version');
    await api.patch('/api/channels/2147483000', { version: 1, priority: 1 }).expect(404);
    expect((await api.get(`/api/channels/${channel.id}`)).body.priority).toBe(9);

    const audit = await h.auditOf('channel', channel.id);
    expect(audit.at(-1)).toMatchObject({
      action: 'channel.update',
      details: { changed: ['priority', 'models', 'limits'] },
    });
  });

  it("sets and clears a channel's own first-byte wait", async () => {
    const channel = await create({ firstByteTimeoutMs: 2_500 });
    expect(channel).toMatchObject({ firstByteTimeoutMs: 2_500 });
    const cleared = await api
      .patch(`/api/channels/${channel.id}`, { version: 1, firstByteTimeoutMs: null })
      .expect(200);
    expect(cleared.body).toMatchObject({ version: 2, firstByteTimeoutMs: null });
    const bad = await api
      .patch(`/api/channels/${channel.id}`, { version: 2, firstByteTimeoutMs: 5 })
      .expect(400);
    expect(bad.body.error.fields[0].field).toBe('firstByteTimeoutMs');
  });

  it('replaces keys by fingerprint, keeping the rows (and statistics) of keys that stay', async () => {
    const [k1, k2, k3] = ['one', 'two', 'six'].map((n) => `upstream-key-${n}-${randomSuffix()}`);
    const channel = await create({ keys: [k1, k2] });
    const [first, second] = channel.keys;
    await api
      .patch(`/api/channels/${channel.id}/keys/${first!.id}`, { limits: { rpm: 7 } })
      .expect(200);
    await query(h.databaseUrl, `UPDATE "ChannelKey" SET "usedQuota" = 1234 WHERE id = $1`, [
      first!.id,
    ]);

    const current = (await api.get(`/api/channels/${channel.id}`)).body as ChannelView;
    const updated = await api
      .patch(`/api/channels/${channel.id}`, { version: current.version, keys: [k3, k1] })
      .expect(200);
    const keys = (updated.body as ChannelView).keys;
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatchObject({ id: first!.id, limits: { rpm: 7 }, usedQuota: 1234 });
    expect(keys[1]?.id).not.toBe(second!.id);
    expect(keys[1]?.lastFour).toBe(k3!.slice(-4));
    expect(updated.text).not.toContain(k3);

    const audit = await h.auditOf('channel', channel.id);
    expect(audit.at(-1)?.details).toMatchObject({
      changed: ['keys'],
      keysAdded: 1,
      keysRemoved: [k2!.slice(-4)],
      keysKept: 1,
    });
    const refused = await api
      .patch(`/api/channels/${channel.id}`, { version: current.version + 1, keys: [] })
      .expect(400);
    expect(refused.body.error.fields[0]).toEqual({
      field: 'keys',
      message: 'keys must hold at least one key',
    });
  });

  it("sets a key's status and limits, and refuses keys of other channels", async () => {
    const channel = await create({ keys: [`upstream-key-${randomSuffix()}`] });
    const other = await create();
    const keyId = channel.keys[0]!.id;
    const updated = await api
      .patch(`/api/channels/${channel.id}/keys/${keyId}`, {
        status: 'disabled',
        limits: { rpm: 30, tpm: 5000, concurrency: 2 },
      })
      .expect(200);
    expect(updated.body).toMatchObject({
      id: keyId,
      status: 'disabled',
      statusReason: `disabled by ${admin.username}`,
      limits: { rpm: 30, tpm: 5000, concurrency: 2 },
    });
    await h.event('channel.changed', (e) => e.channelId === channel.id && e.action === 'updated');
    const cleared = await api
      .patch(`/api/channels/${channel.id}/keys/${keyId}`, {
        status: 'enabled',
        limits: { tpm: null },
      })
      .expect(200);
    expect(cleared.body).toMatchObject({
      status: 'enabled',
      statusReason: null,
      limits: { rpm: 30, tpm: null, concurrency: 2 },
    });
    await api.patch(`/api/channels/${other.id}/keys/${keyId}`, { status: 'disabled' }).expect(404);
    const bad = await api
      .patch(`/api/channels/${channel.id}/keys/${keyId}`, {
        status: 'auto_disabled',
        limits: { rpm: 0 },
      })
      .expect(400);
    expect(bad.body.error.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'limits.rpm',
      'status',
    ]);
    const stale = await api
      .patch(`/api/channels/${channel.id}/keys/${keyId}`, { version: 1, status: 'disabled' })
      .expect(409);
    expect(stale.body.error.code).toBe('version_conflict');
  });

  it("disables and enables; enabling clears the reason, and also lifts the router's auto-disable", async () => {
    const channel = await create();
    const disabled = await api
      .post(`/api/channels/${channel.id}/disable`, { reason: 'relay is down' })
      .expect(200);
    expect(disabled.body).toMatchObject({ status: 'disabled', statusReason: 'relay is down' });
    expect(disabled.body.statusChangedAt).toEqual(expect.any(String));
    const enabled = await api.post(`/api/channels/${channel.id}/enable`).expect(200);
    expect(enabled.body).toMatchObject({ status: 'enabled', statusReason: null });
    // Events arrive over Redis a moment after the answer: wait for the third.
    const changes = await waitFor(
      () => {
        const seen = h.eventsNamed('channel.changed').filter((e) => e.channelId === channel.id);
        return seen.length >= 3 ? seen : undefined;
      },
      { what: 'three channel.changed events' },
    );
    expect(changes).toEqual([
      { channelId: channel.id, action: 'created' },
      { channelId: channel.id, action: 'updated' },
      { channelId: channel.id, action: 'updated' },
    ]);

    await query(
      h.databaseUrl,
      `UPDATE "Channel" SET status = 'auto_disabled', "statusReason" = 'banned account' WHERE id = $1`,
      [channel.id],
    );
    const lifted = await api.post(`/api/channels/${channel.id}/enable`).expect(200);
    expect(lifted.body).toMatchObject({ status: 'enabled', statusReason: null });
    const actions = (await h.auditOf('channel', channel.id)).map((a) => a.action);
    expect(actions).toEqual([
      'channel.create',
      'channel.disable',
      'channel.enable',
      'channel.enable',
    ]);
  });

  it('deletes a channel with its keys', async () => {
    const channel = await create();
    await api.delete(`/api/channels/${channel.id}`).expect(204);
    await api.get(`/api/channels/${channel.id}`).expect(404);
    await api.delete(`/api/channels/${channel.id}`).expect(404);
    const keys = await query(h.databaseUrl, `SELECT id FROM "ChannelKey" WHERE "channelId" = $1`, [
      channel.id,
    ]);
    expect(keys).toHaveLength(0);
    await h.event('channel.changed', (e) => e.channelId === channel.id && e.action === 'deleted');
    expect((await h.auditOf('channel', channel.id)).at(-1)?.action).toBe('channel.delete');
  });

  it('imports a JSON array of channels, all or nothing, with one event', async () => {
    const group = `imp-${randomSuffix()}`;
    const before = h.eventsNamed('channel.changed').length;
    const imported = await api
      .post('/api/channels/import', [
        channelBody({ groups: [group] }),
        channelBody({ groups: [group], kind: 'aggregated' }),
      ])
      .expect(201);
    expect(imported.body.total).toBe(2);
    expect(imported.body.items).toHaveLength(2);
    await h.event('channel.changed', (e) => e.channelId === undefined && e.action === 'created');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(h.eventsNamed('channel.changed').length - before).toBe(1);

    const otherGroup = `imp-${randomSuffix()}`;
    const refused = await api
      .post('/api/channels/import', [
        channelBody({ groups: [otherGroup] }),
        channelBody({ groups: [otherGroup], baseUrl: 'not a url', models: [] }),
      ])
      .expect(400);
    expect(refused.body.error.code).toBe('validation_failed');
    expect(refused.body.error.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      '[1].baseUrl',
      '[1].models',
    ]);
    const listed = await api.get(`/api/channels?group=${otherGroup}`).expect(200);
    expect(listed.body.total).toBe(0);

    const notArray = await api.post('/api/channels/import', { channels: [] }).expect(400);
    expect(notArray.body.error.fields).toEqual([
      { field: 'body', message: 'the body must be a JSON array' },
    ]);
  });

  it('names every bad field of a channel body', async () => {
    const response = await api
      .post('/api/channels', {
        name: '',
        kind: 'relay',
        baseUrl: 'https://user:pass@relay.example.com',
        keys: ['short', 'with space in it'],
        models: ['gpt 4', 'a*b'],
        modelMapping: { 'gpt-4o': 42 },
        priority: 1.5,
        weight: -1,
        groups: ['bad group'],
        limits: { rpm: 0, tpm: 'many' },
        surprise: true,
      })
      .expect(400);
    expect(response.body.error.code).toBe('validation_failed');
    const fields = new Set(response.body.error.fields.map((f: { field: string }) => f.field));
    expect([...fields].sort()).toEqual(
      [
        'surprise',
        'name',
        'kind',
        'baseUrl',
        'keys',
        'models',
        'modelMapping',
        'priority',
        'weight',
        'groups',
        'limits.rpm',
        'limits.tpm',
      ].sort(),
    );
    expect(JSON.stringify(response.body)).not.toContain('with space in it');
  });

  it('refuses a lone * as a model entry, saying which entries are patterns', async () => {
    const response = await api.post('/api/channels', channelBody({ models: ['*'] })).expect(400);
    expect(response.body.error.fields).toEqual([
      { field: 'models', message: expect.stringContaining('* alone is not a pattern') },
    ]);
  });
});
