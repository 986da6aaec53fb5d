import { type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AdminEnv, loadEnvironment } from '@switchyard/config';
import { LoginThrottle } from '@switchyard/auth';
import { createRedisClient, redisReady, type RedisClient } from '@switchyard/messaging';
import {
  SecretCipher,
  generateSecretKeySpec,
  hashPassword,
  sha256Hex,
  verifyPassword,
} from '@switchyard/security';
import {
  clearRedisNamespace,
  createTestDatabase,
  query,
  repositoryRoot,
  waitFor,
} from '@switchyard/testing';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { CliModule } from './cli.module.js';
import { COMMANDS, DEMO_CHANNEL_NAME, DEMO_MODELS, UsageError } from './commands.js';

// The operator commands against a database of their own (the demo seed acts only on an
// empty one), in process for their logic and as the built `dist/cli.js` for its contract.

const OLD_KEY = generateSecretKeySpec('old');
const NEW_KEY = generateSecretKeySpec('new');

describe('admin CLI', () => {
  let databaseUrl: string;
  let dropDatabase: () => Promise<void>;
  const prefix = `${process.env.REDIS_PREFIX ?? 't'}-cli`;
  let subscriber: Redis;
  const events: { pattern: string; data: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    const database = await createTestDatabase();
    databaseUrl = database.url;
    dropDatabase = () => database.drop();
    subscriber = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    subscriber.on('pmessage', (_p: string, _c: string, message: string) => {
      events.push(JSON.parse(message) as (typeof events)[number]);
    });
    await subscriber.psubscribe(`${prefix}:*`);
  });

  afterAll(async () => {
    await subscriber.quit();
    await clearRedisNamespace(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', prefix);
    await dropDatabase();
  });

  const environment = (secretKeys: string) => ({
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: prefix,
    SECRET_KEYS: secretKeys,
    LOG_LEVEL: 'warn',
  });

  /** Runs a command in process; resolves with what it wrote. */
  async function run(args: string[], secretKeys = OLD_KEY, input = '') {
    const env = loadEnvironment(AdminEnv, environment(secretKeys));
    const app: INestApplicationContext = await NestFactory.createApplicationContext(
      CliModule.forRoot(env),
      { logger: false },
    );
    const out: string[] = [];
    const err: string[] = [];
    try {
      const [name, ...rest] = args;
      await COMMANDS[name!]!(app, rest, {
        out: (l) => out.push(l),
        err: (l) => err.push(l),
        input: () => Promise.resolve(input),
      });
    } finally {
      await app.close();
    }
    return { out, err };
  }

  it('seeds the demo channel once, only while no channel exists, even when run twice at once', async () => {
    const seed = [
      'seed-demo-channel',
      '--base-url',
      'http://127.0.0.1:18080',
      '--key',
      'sk-mock-demo',
    ];
    const results = await Promise.all([run(seed), run(seed)]);
    const created = results.flatMap((r) => r.out).filter((l) => l.startsWith('created channel'));
    expect(created).toHaveLength(1);
    const channels = await query<{
      id: number;
      name: string;
      kind: string;
      baseUrl: string;
      models: string[];
    }>(databaseUrl, `SELECT id, name, kind, "baseUrl", models FROM "Channel"`);
    expect(channels).toEqual([
      {
        id: expect.any(Number),
        name: DEMO_CHANNEL_NAME,
        kind: 'aggregated',
        baseUrl: 'http://127.0.0.1:18080',
        models: DEMO_MODELS,
      },
    ]);
    const [key] = await query<{ fingerprint: string }>(
      databaseUrl,
      `SELECT fingerprint FROM "ChannelKey"`,
    );
    expect(key?.fingerprint).toBe(sha256Hex('sk-mock-demo'));
    const again = await run(seed);
    expect(again.out).toEqual(['channels already exist; the demo channel was not created']);
    await waitFor(() =>
      events.find((e) => e.pattern === 'channel.changed' && e.data.channelId === channels[0]!.id),
    );
    const audit = await query<{ actorName: string }>(
      databaseUrl,
      `SELECT "actorName" FROM "AuditLog" WHERE action = 'channel.create'`,
    );
    expect(audit).toEqual([{ actorName: 'cli' }]);
  });

  it('creates a token and prints only its value on stdout', async () => {
    const { out, err } = await run([
      'create-token',
      '--name',
      'launcher',
      '--models',
      'gpt-4o, gpt-4o-mini',
      '--quota',
      '5000000',
    ]);
    expect(out).toHaveLength(1);
    const key = out[0]!;
    expect(key).toMatch(/^sk-[A-Za-z0-9]{48}$/);
    expect(err.join('\n')).not.toContain(key);
    const [row] = await query<{ id: number; name: string; models: string[]; quota: string }>(
      databaseUrl,
      `SELECT id, name, models, quota::text FROM "Token" WHERE "keyHash" = $1`,
      [sha256Hex(key)],
    );
    expect(row).toMatchObject({
      name: 'launcher',
      models: ['gpt-4o', 'gpt-4o-mini'],
      quota: '5000000',
    });
    await waitFor(() =>
      events.find((e) => e.pattern === 'token.changed' && e.data.tokenId === row!.id),
    );
  });

  it('refuses bad command lines with the rules of the API', async () => {
    await expect(run(['create-token'])).rejects.toThrow(UsageError);
    await expect(run(['create-token', '--name', 'x', '--quota', 'lots'])).rejects.toThrow(
      '--quota must be a whole number',
    );
    await expect(run(['create-token', '--name', 'x', '--allow-ips', '300.1.1.1'])).rejects.toThrow(
      /allowIps/,
    );
    await expect(run(['seed-demo-channel', '--key', 'k', '--bogus'])).rejects.toThrow(UsageError);
  });

  it('reseals every upstream key under the first secret key, and tells the router', async () => {
    const before = await query<{ id: number; secretCiphertext: string }>(
      databaseUrl,
      `SELECT id, "secretCiphertext" FROM "ChannelKey"`,
    );
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((k) => k.secretCiphertext.startsWith('v1.old.'))).toBe(true);

    const rotated = `${NEW_KEY},${OLD_KEY}`;
    const { out } = await run(['reseal-secrets'], rotated);
    expect(out).toEqual([
      `resealed ${before.length} of ${before.length} upstream keys under the current secret key`,
    ]);
    const after = await query<{ secretCiphertext: string }>(
      databaseUrl,
      `SELECT "secretCiphertext" FROM "ChannelKey" ORDER BY id`,
    );
    expect(after.every((k) => k.secretCiphertext.startsWith('v1.new.'))).toBe(true);
    // The old key can now be retired: the new one alone opens every secret.
    expect(new SecretCipher([NEW_KEY]).open(after[0]!.secretCiphertext)).toBe('sk-mock-demo');
    await waitFor(() =>
      events.find(
        (e) =>
          e.pattern === 'channel.changed' &&
          e.data.channelId === undefined &&
          e.data.action === 'updated',
      ),
    );
    const again = await run(['reseal-secrets'], rotated);
    expect(again.out[0]).toMatch(/^resealed 0 of /);
  });

  describe('the way back in for a shut account', () => {
    const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    let redis: RedisClient;
    /** A ceiling of 2: two failures from two addresses shut the account everywhere. */
    const throttle = (namespace: string) =>
      new LoginThrottle(redis, {
        namespace,
        freeFailuresPerAccountAddress: 5,
        freeFailuresPerAddress: 20,
        accountCeiling: 2,
        firstDelaySeconds: 1,
        maxDelaySeconds: 3600,
      });
    const shut = async (namespace: string, username: string) => {
      await throttle(namespace).begin(username, '192.0.2.1');
      await throttle(namespace).begin(username, '192.0.2.2');
      await expect(throttle(namespace).begin(username, '192.0.2.3')).rejects.toMatchObject({
        code: 'too_many_attempts',
      });
    };

    beforeAll(async () => {
      redis = createRedisClient({ url, prefix });
      await redisReady(redis);
    });

    afterAll(() => {
      redis.disconnect();
    });

    it('unlock-login forgets the failures on an administrator or a chat user', async () => {
      await shut('admin', 'shut-admin');
      expect((await run(['unlock-login', '--username', 'Shut-Admin'])).out).toEqual([
        'failed sign-ins of "Shut-Admin" (admin) forgotten',
      ]);
      await expect(throttle('admin').begin('shut-admin', '192.0.2.3')).resolves.toBeDefined();

      await shut('chat', 'shut-user');
      await shut('admin', 'shut-user');
      await run(['unlock-login', '--username', 'shut-user', '--app', 'chat']);
      await expect(throttle('chat').begin('shut-user', '192.0.2.3')).resolves.toBeDefined();
      // The other service's account of the same name is another account.
      await expect(throttle('admin').begin('shut-user', '192.0.2.3')).rejects.toMatchObject({
        code: 'too_many_attempts',
      });
      await expect(run(['unlock-login', '--username', 'x', '--app', 'edge'])).rejects.toThrow(
        UsageError,
      );
      await expect(run(['unlock-login'])).rejects.toThrow('--username is required');
    });

    it('reset-password sets a password to change at next sign-in, and forgets the failures', async () => {
      const [admin] = await query<{ id: number }>(
        databaseUrl,
        `INSERT INTO "AdminUser" (username, "passwordHash", role, "updatedAt")
         VALUES ('locked-out', $1, 'owner', now()) RETURNING id`,
        [await hashPassword('the forgotten one')],
      );
      await shut('admin', 'locked-out');
      const { out } = await run(
        ['reset-password', '--username', 'locked-out'],
        OLD_KEY,
        'a brand new password\nignored second line\n',
      );
      expect(out).toEqual(['password of "locked-out" reset; it must be changed at next sign-in']);
      const [row] = await query<{ passwordHash: string; mustChangePassword: boolean }>(
        databaseUrl,
        `SELECT "passwordHash", "mustChangePassword" FROM "AdminUser" WHERE id = $1`,
        [admin!.id],
      );
      expect(row!.mustChangePassword).toBe(true);
      expect(await verifyPassword('a brand new password', row!.passwordHash)).toBe(true);
      await expect(throttle('admin').begin('locked-out', '192.0.2.3')).resolves.toBeDefined();
      const audit = await query<{ actorName: string; details: unknown }>(
        databaseUrl,
        `SELECT "actorName", details FROM "AuditLog" WHERE action = 'admin.update' AND "targetId" = $1`,
        [String(admin!.id)],
      );
      expect(audit).toEqual([{ actorName: 'cli', details: { passwordReset: true } }]);

      await expect(
        run(['reset-password', '--username', 'locked-out'], OLD_KEY, 'short\n'),
      ).rejects.toThrow(/password must be/);
      await expect(
        run(['reset-password', '--username', 'nobody'], OLD_KEY, 'a brand new password\n'),
      ).rejects.toMatchObject({ code: 'not_found' });
    });
  });

  describe('as the built dist/cli.js', () => {
    const cli = path.join(repositoryRoot, 'apps/admin/dist/cli.js');
    const exec = (args: string[], env: NodeJS.ProcessEnv) =>
      promisify(execFile)(process.execPath, [cli, ...args], { env }).then(
        ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
        (error: { code: number; stdout: string; stderr: string }) => error,
      );

    beforeAll(() => {
      if (!existsSync(cli)) throw new Error(`${cli} is missing: build the admin app first`);
    });

    it('prints the token on stdout and exits 0', async () => {
      const result = await exec(['create-token', '--name', 'from-process'], environment(NEW_KEY));
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^sk-[A-Za-z0-9]{48}\n$/);
      expect(result.stderr).toContain('shown this once');
    });

    it('exits 2 with the usage on a bad command line or configuration', async () => {
      const unknown = await exec(['make-coffee'], environment(NEW_KEY));
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain('unknown command "make-coffee"');
      const { SECRET_KEYS: _unset, ...withoutKeys } = environment(NEW_KEY);
      const unconfigured = await exec(['reseal-secrets'], withoutKeys);
      expect(unconfigured.code).toBe(2);
      expect(unconfigured.stderr).toContain('SECRET_KEYS');
    });
  });
});
