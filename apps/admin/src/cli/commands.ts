import { type INestApplicationContext, type Type } from '@nestjs/common';
import { unlockLogin as unlockThrottle } from '@switchyard/auth';
import { ApiError } from '@switchyard/contracts';
import { REDIS, redisReady, type RedisClient } from '@switchyard/messaging';
import { apiValidationPipe } from '@switchyard/service';
import { parseArgs } from 'node:util';
import { CreateChannelDto } from '../channels/channels.dto.js';
import { ChannelsService } from '../channels/channels.service.js';
import { AdminsService } from '../admins/admins.service.js';
import { UpdateAdminDto } from '../admins/admins.dto.js';
import { AdminUsersRepository } from '../auth/admin-users.repository.js';
import { CLI_ACTOR } from '../common/actor.js';
import { CreateTokenDto } from '../tokens/tokens.dto.js';
import { TokensService } from '../tokens/tokens.service.js';

// The operator commands. Each writes its result to `out` (stdout) and its remarks to
// `err` (stderr), so a script can capture exactly the value it asked for.

export const DEMO_CHANNEL_NAME = 'Demo (mock-upstream)';
/** What mock-upstream says it serves. */
export const DEMO_MODELS = [
  'gpt-4o',
  'gpt-4o-mini',
  'gpt-4-all',
  'gpt-3.5-turbo',
  'text-embedding-3-small',
  'dall-e-3',
  'suno-v3',
];

export const USAGE = `Usage: node dist/cli.js <command> [options]

Commands:
  seed-demo-channel --base-url URL --key KEY [--models m1,m2]
      Creates the "${DEMO_CHANNEL_NAME}" aggregated channel, only when no channel exists.
  create-token --name NAME [--models m1,m2] [--quota MICRO_USD] [--expires-at ISO]
               [--group G] [--allow-ips a,b] [--rate-limit RPM]
      Creates a gateway token and prints its value, once, on stdout.
      Default: never expires, unlimited quota, every model.
  reseal-secrets
      Re-encrypts every upstream key under the first of SECRET_KEYS (key rotation).
  unlock-login --username NAME [--app admin|chat]
      Forgets every failed sign-in counted against the account (default: a gateway
      administrator; --app chat: a chat user), from every address: the way back in when
      guessing from many addresses has shut it (docs/reliability.md, "Sign-in throttling").
  reset-password --username NAME
      Sets a gateway administrator's password to the first line of standard input, to be
      changed at next sign-in; ends their sessions and forgets their failed sign-ins.

Configuration comes from the environment (DATABASE_URL, REDIS_URL, REDIS_PREFIX, SECRET_KEYS).`;

/** A mistake in the command line: exit code 2 and the usage. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface Output {
  out(line: string): void;
  err(line: string): void;
  /** Standard input, read whole (the tests give their own). */
  input?(): Promise<string>;
}

type Command = (app: INestApplicationContext, args: string[], io: Output) => Promise<void>;

export const COMMANDS: Record<string, Command> = {
  'seed-demo-channel': seedDemoChannel,
  'create-token': createToken,
  'reseal-secrets': resealSecrets,
  'unlock-login': unlockLogin,
  'reset-password': resetPassword,
};

async function seedDemoChannel(app: INestApplicationContext, args: string[], io: Output) {
  const { values } = parse(() =>
    parseArgs({
      args,
      strict: true,
      options: {
        'base-url': { type: 'string' },
        key: { type: 'string' },
        models: { type: 'string' },
      },
    }),
  );
  const baseUrl = required(values['base-url'], '--base-url');
  const key = required(values.key, '--key');
  const dto = await validated(CreateChannelDto, {
    name: DEMO_CHANNEL_NAME,
    kind: 'aggregated',
    baseUrl,
    keys: [key],
    models: list(values.models) ?? DEMO_MODELS,
  });
  const channel = await app.get(ChannelsService).createIfNoneExists(CLI_ACTOR, dto);
  if (channel) io.out(`created channel ${channel.id} "${channel.name}" at ${channel.baseUrl}`);
  else io.out('channels already exist; the demo channel was not created');
}

async function createToken(app: INestApplicationContext, args: string[], io: Output) {
  const { values } = parse(() =>
    parseArgs({
      args,
      strict: true,
      options: {
        name: { type: 'string' },
        models: { type: 'string' },
        quota: { type: 'string' },
        'expires-at': { type: 'string' },
        group: { type: 'string' },
        'allow-ips': { type: 'string' },
        'rate-limit': { type: 'string' },
      },
    }),
  );
  const dto = await validated(CreateTokenDto, {
    name: required(values.name, '--name'),
    expiresAt: values['expires-at'] ?? null,
    quota: integer(values.quota, '--quota'),
    ...(values.models !== undefined ? { models: list(values.models) } : {}),
    ...(values['allow-ips'] !== undefined ? { allowIps: list(values['allow-ips']) } : {}),
    ...(values.group !== undefined ? { group: values.group } : {}),
    ...(values['rate-limit'] !== undefined
      ? { rateLimit: integer(values['rate-limit'], '--rate-limit') }
      : {}),
  });
  const token = await app.get(TokensService).create(CLI_ACTOR, dto);
  io.err(`created token ${token.id} "${token.name}"; its value is shown this once:`);
  io.out(token.key);
}

async function resealSecrets(app: INestApplicationContext, args: string[], io: Output) {
  parse(() => parseArgs({ args, strict: true, options: {} }));
  const report = await app.get(ChannelsService).resealAll(CLI_ACTOR);
  io.out(
    `resealed ${report.resealed} of ${report.keys} upstream keys under the current secret key`,
  );
}

async function unlockLogin(app: INestApplicationContext, args: string[], io: Output) {
  const { values } = parse(() =>
    parseArgs({
      args,
      strict: true,
      options: { username: { type: 'string' }, app: { type: 'string', default: 'admin' } },
    }),
  );
  const username = required(values.username, '--username');
  const target = values.app;
  if (target !== 'admin' && target !== 'chat') throw new UsageError('--app must be admin or chat');
  const redis = app.get<RedisClient>(REDIS);
  await redisReady(redis);
  // The chat service keeps its throttle in the same Redis and prefix, under `chat:`.
  await unlockThrottle(redis, target, username);
  io.out(`failed sign-ins of "${username}" (${target}) forgotten`);
}

async function resetPassword(app: INestApplicationContext, args: string[], io: Output) {
  const { values } = parse(() =>
    parseArgs({ args, strict: true, options: { username: { type: 'string' } } }),
  );
  const username = required(values.username, '--username');
  // From standard input, not the command line, where every user of the machine sees it.
  const password = (await (io.input ?? readStdin)()).split(/\r?\n/)[0] ?? '';
  const dto = await validated(UpdateAdminDto, { password });
  const admin = await app.get(AdminUsersRepository).findByUsername(username);
  if (!admin) throw new ApiError('not_found', `No administrator is named "${username}"`);
  // Its sessions end and its failures are forgotten in Redis: both must happen.
  await redisReady(app.get<RedisClient>(REDIS));
  await app.get(AdminsService).update(CLI_ACTOR, admin.id, dto);
  io.out(`password of "${admin.username}" reset; it must be changed at next sign-in`);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Turns the parser's complaints (unknown option, missing value) into usage errors. */
function parse<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === '') throw new UsageError(`${flag} is required`);
  return value;
}

function list(value: string | undefined): string[] | undefined {
  return value
    ?.split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function integer(value: string | undefined, flag: string): number | null {
  if (value === undefined) return null;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a whole number`);
  return Number(value);
}

/** The same validation as the HTTP API, so the CLI cannot store what the API would refuse. */
async function validated<T extends object>(type: Type<T>, value: object): Promise<T> {
  try {
    return (await apiValidationPipe().transform(value, { type: 'body', metatype: type })) as T;
  } catch (error) {
    if (error instanceof ApiError && error.fields) {
      throw new UsageError(error.fields.map((f) => f.message).join('; '));
    }
    throw error;
  }
}
