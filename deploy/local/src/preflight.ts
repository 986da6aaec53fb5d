import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';

// Checks of Postgres and Redis before anything is built or started: a server that is set
// but wrong stops `pnpm start` with one line naming the variable, the address (never the
// password), what is wrong and what to do. "Nothing answers" is returned rather than
// thrown, so that the launcher can run servers of its own when no address was given.
//
// `pnpm start` runs this file first, straight from its TypeScript source (Node strips the
// types), so that nobody waits for a build to learn that REDIS_URL has a typo; it imports
// only npm packages for that reason. The launcher runs the same checks again after the build.

/** The schema's oldest supported Postgres (deploy/README.md). */
export const MINIMUM_POSTGRES_MAJOR = 15;
/** BullMQ refuses older servers (its RedisConnection.minimumVersion). */
export const MINIMUM_REDIS_VERSION = '5.0.0';
const CONNECT_TIMEOUT_MS = 5_000;

/** A problem the user has to fix; its message is the whole explanation. */
export class PreflightError extends Error {}

export interface ServerAddress {
  variable: 'DATABASE_URL' | 'REDIS_URL';
  url: string;
  /** True when the variable is not set and the launcher looks at the local default. */
  isDefault: boolean;
}

export type Reachability = 'ready' | 'nothing-answers';

/** The URL with its password blanked out, for messages. */
export function withoutPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

function describe(server: ServerAddress): string {
  const address = withoutPassword(server.url);
  return server.isDefault
    ? `${server.variable} is not set, and the local default ${address}`
    : `${server.variable} (${address})`;
}

function fail(server: ServerAddress, what: string, todo: string): PreflightError {
  return new PreflightError(`${describe(server)}: ${what}. ${todo}`);
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT']);

function errorCode(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  if (code) return code;
  return /timeout/i.test(message ?? '') ? 'ETIMEDOUT' : '';
}

function notAnswering(server: ServerAddress, code: string, otherwise: string): PreflightError {
  const host = new URL(server.url).host;
  return code === 'ENOTFOUND' || code === 'EAI_AGAIN'
    ? fail(server, `the host name in it does not resolve (${code})`, otherwise)
    : fail(server, `nothing answers at ${host} (${code})`, otherwise);
}

async function connectPostgres(url: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  // A server that goes away later is the apps' business, not an unhandled 'error' here.
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/**
 * Connects to the database DATABASE_URL names, creating it when the server is there but the
 * database is not and the user may create one (a first start on an existing server).
 */
export async function checkPostgres(
  server: ServerAddress,
  options: { createMissing: boolean; say: (line: string) => void },
): Promise<Reachability> {
  const url = new URL(server.url);
  const user = decodeURIComponent(url.username) || 'postgres';
  const database = decodeURIComponent(url.pathname.slice(1));
  let client: pg.Client;
  try {
    client = await connectPostgres(server.url);
  } catch (error) {
    const code = errorCode(error);
    if (UNREACHABLE.has(code)) {
      if (server.isDefault) return 'nothing-answers';
      throw notAnswering(
        server,
        code,
        'Start Postgres there or correct DATABASE_URL; unset it to let pnpm start run a Postgres of its own',
      );
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      throw notAnswering(server, code, 'Correct the host in DATABASE_URL');
    if (code === '28P01')
      throw fail(
        server,
        `the server refused the password of user "${user}"`,
        'Correct the user and password in DATABASE_URL',
      );
    if (code === '28000')
      throw fail(
        server,
        `the server refused user "${user}" (${(error as Error).message})`,
        'Use a user the server has and admits from this host (pg_hba.conf), or correct DATABASE_URL',
      );
    if (code === '3D000') {
      // Created now, or (only checking, before the build) known to be creatable.
      client = await createDatabase(server, user, database, options);
    } else {
      throw fail(server, `connecting failed: ${(error as Error).message}`, 'Check DATABASE_URL');
    }
  }
  try {
    const { rows } = await client.query<{ server_version_num: string; server_version: string }>(
      'SELECT current_setting($1) AS server_version_num, current_setting($2) AS server_version',
      ['server_version_num', 'server_version'],
    );
    const major = Math.floor(Number(rows[0]!.server_version_num) / 10_000);
    if (major < MINIMUM_POSTGRES_MAJOR)
      throw fail(
        server,
        `Postgres ${rows[0]!.server_version} is older than ${MINIMUM_POSTGRES_MAJOR}, the oldest the schema runs on`,
        `Upgrade it, or point DATABASE_URL at Postgres ${MINIMUM_POSTGRES_MAJOR} or later`,
      );
  } finally {
    await client.end();
  }
  return 'ready';
}

/** Creates the database (or, when only checking, sees that it could); returns a connection. */
async function createDatabase(
  server: ServerAddress,
  user: string,
  database: string,
  options: { createMissing: boolean; say: (line: string) => void },
): Promise<pg.Client> {
  const maintenance = new URL(server.url);
  maintenance.pathname = '/postgres';
  const client = await connectPostgres(maintenance.toString()).catch((error: unknown) => {
    throw fail(
      server,
      `database "${database}" does not exist, and the server's "postgres" database is not open to "${user}" to create it (${(error as Error).message})`,
      `Create it (createdb -O ${user} ${database}) or name an existing database in DATABASE_URL`,
    );
  });
  const cannotCreate = (why: string) =>
    fail(
      server,
      `database "${database}" does not exist, and user "${user}" may not create it (${why})`,
      `Create it (createdb -O ${user} ${database}) or name an existing database in DATABASE_URL`,
    );
  try {
    if (!options.createMissing) {
      const { rows } = await client.query<{ allowed: boolean }>(
        'SELECT rolcreatedb OR rolsuper AS allowed FROM pg_roles WHERE rolname = current_user',
      );
      if (!rows[0]?.allowed) throw cannotCreate('no CREATEDB privilege');
      return client;
    }
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
    options.say(`created database ${database}`);
  } catch (error) {
    await client.end();
    throw error instanceof PreflightError ? error : cannotCreate((error as Error).message);
  }
  await client.end();
  return connectPostgres(server.url);
}

function versionBelow(version: string, minimum: string): boolean {
  const [a, b] = [version, minimum].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) {
    if ((a![i] ?? 0) !== (b![i] ?? 0)) return (a![i] ?? 0) < (b![i] ?? 0);
  }
  return false;
}

function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

/** Connects to REDIS_URL and checks that BullMQ's queues can run on that server. */
export async function checkRedis(server: ServerAddress): Promise<Reachability> {
  const client = new Redis(server.url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
  });
  // ioredis rejects connect() with "Connection is closed"; the cause comes as an 'error' event.
  let cause: unknown;
  client.on('error', (error) => (cause ??= error));
  try {
    await client.connect();
  } catch (rejection) {
    client.disconnect();
    const error = cause ?? rejection;
    const code = errorCode(error);
    if (UNREACHABLE.has(code)) {
      if (server.isDefault) return 'nothing-answers';
      throw notAnswering(
        server,
        code,
        "Start Redis there or correct REDIS_URL; unset it to let pnpm start run the machine's redis-server",
      );
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      throw notAnswering(server, code, 'Correct the host in REDIS_URL');
    const message = (error as Error).message;
    if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(message))
      throw fail(
        server,
        `the server refused the credentials (${message})`,
        'Correct the user and password in REDIS_URL (redis://user:password@host:port)',
      );
    throw fail(server, `connecting failed: ${message}`, 'Check REDIS_URL');
  }
  try {
    const info = await client.info().catch((error: unknown) => {
      const message = (error as Error).message;
      throw /NOAUTH/.test(message)
        ? fail(
            server,
            'the server wants a password and REDIS_URL has none',
            'Put it in REDIS_URL (redis://:password@host:port)',
          )
        : fail(server, `INFO failed: ${message}`, 'Allow INFO for this user (BullMQ reads it)');
    });
    const version = infoField(info, 'redis_version') ?? '0';
    if (versionBelow(version, MINIMUM_REDIS_VERSION))
      throw fail(
        server,
        `Redis ${version} is older than ${MINIMUM_REDIS_VERSION}, the oldest BullMQ's queues run on`,
        'Upgrade it, or point REDIS_URL at Redis 7',
      );
    const policy = infoField(info, 'maxmemory_policy');
    if (policy && policy !== 'noeviction')
      throw fail(
        server,
        `its maxmemory-policy is ${policy}, so it may evict queued jobs and BullMQ needs noeviction`,
        'Set maxmemory-policy noeviction (redis.conf, or CONFIG SET maxmemory-policy noeviction)',
      );
  } finally {
    client.disconnect();
  }
  return 'ready';
}

/** The machine's redis-server, if it is on PATH. */
export function findRedisServer(): string | undefined {
  for (const directory of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!directory) continue;
    const candidate = path.join(directory, 'redis-server');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/** What to do on a machine with no Redis running and none installed. */
export function howToGetRedis(port: number): string {
  return [
    `REDIS_URL is not set, nothing answers at 127.0.0.1:${port}, and this machine has no redis-server to start. Get Redis 7, then run pnpm start again:`,
    '  Debian/Ubuntu:     sudo apt-get install redis-server',
    '  macOS (Homebrew):  brew install redis',
    `  Docker:            docker run -d --name switchyard-redis -p 127.0.0.1:${port}:6379 redis:7`,
    'or point REDIS_URL at a Redis you already have: REDIS_URL=redis://:<password>@<host>:6379 pnpm start',
  ].join('\n');
}

/** Where Postgres or Redis is looked for, or run, when DATABASE_URL or REDIS_URL is not set. */
function localPort(variable: 'LOCAL_POSTGRES_PORT' | 'LOCAL_REDIS_PORT', fallback: number): number {
  const value = process.env[variable];
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    throw new PreflightError(`${variable} must be a port number (1-65535), not "${value}"`);
  return port;
}

export interface Findings {
  database: ServerAddress & { state: Reachability; localPort: number };
  redis: ServerAddress & { state: Reachability; localPort: number };
  /** The redis-server to start, when nothing answers at the local default. */
  redisServer: string | undefined;
}

/**
 * Where the suite's Postgres and Redis are, from DATABASE_URL and REDIS_URL or, when they are
 * not set, the local defaults. Throws a PreflightError for anything the user has to fix.
 */
export async function preflight(options: {
  createMissing: boolean;
  say: (line: string) => void;
}): Promise<Findings> {
  const postgresPort = localPort('LOCAL_POSTGRES_PORT', 5432);
  const redisPort = localPort('LOCAL_REDIS_PORT', 6379);
  const database: ServerAddress = process.env.DATABASE_URL
    ? { variable: 'DATABASE_URL', url: process.env.DATABASE_URL, isDefault: false }
    : {
        variable: 'DATABASE_URL',
        url: `postgresql://postgres@127.0.0.1:${postgresPort}/switchyard`,
        isDefault: true,
      };
  const redis: ServerAddress = process.env.REDIS_URL
    ? { variable: 'REDIS_URL', url: process.env.REDIS_URL, isDefault: false }
    : { variable: 'REDIS_URL', url: `redis://127.0.0.1:${redisPort}`, isDefault: true };

  // Redis first: its checks change nothing, and Postgres's may create the database.
  const redisState = await checkRedis(redis);
  const redisServer = redisState === 'nothing-answers' ? findRedisServer() : undefined;
  if (redisState === 'nothing-answers' && !redisServer)
    throw new PreflightError(howToGetRedis(redisPort));
  const databaseState = await checkPostgres(database, options);
  return {
    database: { ...database, state: databaseState, localPort: postgresPort },
    redis: { ...redis, state: redisState, localPort: redisPort },
    redisServer,
  };
}

if (import.meta.filename === process.argv[1]) {
  await preflight({ createMissing: false, say: () => undefined }).catch((error: unknown) => {
    process.stdout.write(`pnpm start: ${(error as Error).message}\n`);
    process.exit(1);
  });
}
