import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort, query, repositoryRoot, WaitAborted, waitFor } from '@switchyard/testing';

// `pnpm start` on a machine as a new user has it: no Postgres and no Redis running (the
// launcher runs an embedded Postgres and the machine's redis-server, on ports of the test's
// own, never the machine's), or with DATABASE_URL / REDIS_URL that are set but wrong, where
// it must stop before building anything, say in one line what is wrong, and leave nothing
// running.

const SERVICE_PORTS = [
  'MOCK_UPSTREAM_PORT',
  'ADMIN_PORT',
  'ROUTER_OPS_PORT',
  'METERING_OPS_PORT',
  'EDGE_PORT',
  'CHAT_PORT',
  'WEB_PORT',
  'EDGE_OPS_PORT',
  'ADMIN_OPS_PORT',
  'CHAT_OPS_PORT',
  'WEB_OPS_PORT',
] as const;
const machinePostgres = new URL(
  process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/x',
);
const machineRedis = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const stateDirs: string[] = [];

interface Launch {
  child: ChildProcess;
  output: () => string;
  ports: Record<string, number>;
}

function newStateDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-first-run-'));
  // As root, the embedded Postgres runs as the system user postgres, which must reach its data.
  chmodSync(dir, 0o755);
  stateDirs.push(dir);
  return dir;
}

/** The launcher with fresh ports for every service, and the given machine state. */
async function launch(
  settings: Record<string, string | undefined>,
  script = 'deploy/local/dist/start.js',
): Promise<Launch> {
  const ports: Record<string, number> = {};
  for (const name of SERVICE_PORTS) ports[name] = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' };
  for (const name of [
    'DATABASE_URL',
    'REDIS_URL',
    'REDIS_PREFIX',
    'ADMIN_PASSWORD',
    'CHAT_ADMIN_PASSWORD',
  ])
    delete env[name];
  Object.assign(env, {
    ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])),
    ADMIN_URL: `http://127.0.0.1:${ports.ADMIN_PORT}`,
    CHAT_URL: `http://127.0.0.1:${ports.CHAT_PORT}`,
  });
  for (const [name, value] of Object.entries(settings)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const child = spawn(process.execPath, [path.join(repositoryRoot, script)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output, ports };
}

async function untilExit(run: Launch): Promise<number | null> {
  if (run.child.exitCode !== null) return run.child.exitCode;
  const [code] = (await once(run.child, 'exit')) as [number | null];
  return code;
}

async function waitForOutput(run: Launch, text: string, timeoutMs: number): Promise<void> {
  await waitFor(
    () => {
      if (run.child.exitCode !== null)
        throw new WaitAborted(`launcher exited early:\n${run.output()}`);
      return run.output().includes(text);
    },
    {
      timeoutMs,
      intervalMs: 100,
      what: () => `"${text}" in the launcher's output:\n${run.output()}`,
    },
  );
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Every port the launcher could have opened is closed again. */
async function expectNothingListening(ports: number[]): Promise<void> {
  const open = [];
  for (const port of ports) if (await answers(port)) open.push(port);
  expect(open).toEqual([]);
}

/** No process of the machine works in this state directory (Postgres and Redis would). */
function processesUsing(stateDir: string): string[] {
  return readProcessCommandLines().filter((line) => line.includes(stateDir));
}

function readProcessCommandLines(): string[] {
  const lines: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      lines.push(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' '));
    } catch {
      // gone meanwhile
    }
  }
  return lines;
}

afterAll(() => {
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
});

describe('on a machine where nothing answers at the Postgres and Redis addresses', () => {
  let stateDir: string;
  let postgresPort: number;
  let redisPort: number;
  let run: Launch;

  beforeAll(async () => {
    stateDir = newStateDir();
    postgresPort = await freePort();
    redisPort = await freePort();
    run = await launch({
      LOCAL_STATE_DIR: stateDir,
      LOCAL_POSTGRES_PORT: String(postgresPort),
      LOCAL_REDIS_PORT: String(redisPort),
    });
    await waitForOutput(run, 'Press Ctrl-C to stop everything.', 540_000);
  }, 560_000);

  function embeddedPassword(): string {
    return /^EMBEDDED_POSTGRES_PASSWORD=(.+)$/m.exec(
      readFileSync(path.join(stateDir, 'local/secrets.env'), 'utf8'),
    )![1]!;
  }

  afterAll(async () => {
    if (run.child.exitCode === null) {
      run.child.kill('SIGINT');
      await untilExit(run);
    }
  }, 60_000);

  it('runs an embedded Postgres and the machine redis-server, with their data in the state directory', async () => {
    expect(run.output()).toContain(`starting the embedded Postgres (data in ${stateDir}/postgres)`);
    expect(run.output()).toMatch(/starting \S*redis-server \(data in /);
    expect(run.output()).toContain('created database switchyard');
    expect(run.output()).toMatch(/applied \d+ migration\(s\)/);
    expect(existsSync(path.join(stateDir, 'postgres', 'PG_VERSION'))).toBe(true);
    expect(existsSync(path.join(stateDir, 'redis'))).toBe(true);

    // The suite runs on them: the demo channel is in the embedded database.
    const database = `postgresql://postgres:${encodeURIComponent(embeddedPassword())}@127.0.0.1:${postgresPort}/switchyard`;
    expect(await query(database, 'SELECT name FROM "Channel"')).toHaveLength(1);
    expect((await fetch(`http://127.0.0.1:${run.ports.EDGE_PORT}/readyz`)).status).toBe(200);
  });

  it('refuses a DATABASE_URL with a wrong password in one line, without the password, before building', async () => {
    const wrong = await launch({
      LOCAL_STATE_DIR: newStateDir(),
      DATABASE_URL: `postgresql://postgres:not-the-password@127.0.0.1:${postgresPort}/switchyard`,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    });
    expect(await untilExit(wrong)).toBe(1);
    expect(wrong.output().trim()).toBe(
      `pnpm start: DATABASE_URL (postgresql://postgres:***@127.0.0.1:${postgresPort}/switchyard): ` +
        'the server refused the password of user "postgres". Correct the user and password in DATABASE_URL',
    );
    await expectNothingListening(Object.values(wrong.ports));
  });

  it('refuses a missing database its user may not create', async () => {
    const admin = `postgresql://postgres:${encodeURIComponent(embeddedPassword())}@127.0.0.1:${postgresPort}/postgres`;
    await query(admin, `CREATE ROLE reader LOGIN PASSWORD 'reader-password'`);
    for (const script of ['deploy/local/src/preflight.ts', 'deploy/local/dist/start.js']) {
      const refused = await launch(
        {
          LOCAL_STATE_DIR: newStateDir(),
          DATABASE_URL: `postgresql://reader:reader-password@127.0.0.1:${postgresPort}/elsewhere`,
          REDIS_URL: `redis://127.0.0.1:${redisPort}`,
        },
        script,
      );
      expect(await untilExit(refused)).toBe(1);
      expect(refused.output().trim()).toBe(
        `pnpm start: DATABASE_URL (postgresql://reader:***@127.0.0.1:${postgresPort}/elsewhere): ` +
          'database "elsewhere" does not exist, and user "reader" may not create it (' +
          (script.endsWith('.ts')
            ? 'no CREATEDB privilege'
            : 'permission denied to create database') +
          '). Create it (createdb -O reader elsewhere) or name an existing database in DATABASE_URL',
      );
      await expectNothingListening(Object.values(refused.ports));
    }
  });

  it('stops the services, then Postgres and Redis, on Ctrl-C', async () => {
    run.child.kill('SIGINT');
    expect(await untilExit(run)).toBe(0);
    await expectNothingListening([...Object.values(run.ports), postgresPort, redisPort]);
    expect(processesUsing(stateDir)).toEqual([]);
  }, 60_000);

  it('finds its data again on the next start', async () => {
    run = await launch({
      LOCAL_STATE_DIR: stateDir,
      LOCAL_POSTGRES_PORT: String(postgresPort),
      LOCAL_REDIS_PORT: String(redisPort),
    });
    await waitForOutput(run, 'Press Ctrl-C to stop everything.', 540_000);
    expect(run.output()).toContain('starting the embedded Postgres');
    expect(run.output()).toContain('database is up to date');
    expect(run.output()).not.toContain('created database');
    expect(run.output()).not.toContain('Gateway administrator:');

    run.child.kill('SIGINT');
    expect(await untilExit(run)).toBe(0);
    await expectNothingListening([...Object.values(run.ports), postgresPort, redisPort]);
    expect(processesUsing(stateDir)).toEqual([]);
  }, 600_000);
});

describe('with servers that are set but unusable, it stops before building and starts nothing', () => {
  it('names an unreachable REDIS_URL, and creates no database', async () => {
    const redisPort = await freePort();
    const database = `sy_first_run_${Date.now().toString(36)}`;
    const run = await launch({
      LOCAL_STATE_DIR: newStateDir(),
      DATABASE_URL: Object.assign(new URL(machinePostgres), {
        pathname: `/${database}`,
      }).toString(),
      REDIS_URL: `redis://:secret@127.0.0.1:${redisPort}`,
    });
    expect(await untilExit(run)).toBe(1);
    expect(run.output().trim()).toBe(
      `pnpm start: REDIS_URL (redis://:***@127.0.0.1:${redisPort}): nothing answers at 127.0.0.1:${redisPort} (ECONNREFUSED). ` +
        "Start Redis there or correct REDIS_URL; unset it to let pnpm start run the machine's redis-server",
    );
    await expectNothingListening(Object.values(run.ports));
    const created = await query(
      machinePostgres.toString(),
      'SELECT 1 FROM pg_database WHERE datname = $1',
      [database],
    );
    expect(created).toEqual([]);
  });

  it('runs the same checks from the sources, so that `pnpm start` stops before its build', async () => {
    const redisPort = await freePort();
    const unreachable = await launch(
      { LOCAL_STATE_DIR: newStateDir(), REDIS_URL: `redis://127.0.0.1:${redisPort}` },
      'deploy/local/src/preflight.ts',
    );
    expect(await untilExit(unreachable)).toBe(1);
    expect(unreachable.output()).toMatch(
      new RegExp(
        `^pnpm start: REDIS_URL \\(redis://127\\.0\\.0\\.1:${redisPort}\\): nothing answers`,
      ),
    );

    // Servers that are fine pass silently, and a missing database its user may create is left
    // for the launcher to create.
    const database = `sy_first_run_${Date.now().toString(36)}`;
    const fine = await launch(
      {
        LOCAL_STATE_DIR: newStateDir(),
        DATABASE_URL: Object.assign(new URL(machinePostgres), {
          pathname: `/${database}`,
        }).toString(),
        REDIS_URL: machineRedis,
      },
      'deploy/local/src/preflight.ts',
    );
    expect(await untilExit(fine)).toBe(0);
    expect(fine.output()).toBe('');
    expect(
      await query(machinePostgres.toString(), 'SELECT 1 FROM pg_database WHERE datname = $1', [
        database,
      ]),
    ).toEqual([]);
  });

  it('names a REDIS_URL whose credentials the server refuses', async () => {
    const address = new URL(machineRedis);
    address.username = 'nobody-here';
    address.password = 'wrong';
    const run = await launch({ LOCAL_STATE_DIR: newStateDir(), REDIS_URL: address.toString() });
    expect(await untilExit(run)).toBe(1);
    expect(run.output()).toMatch(
      /^pnpm start: REDIS_URL \(redis:\/\/nobody-here:\*\*\*@[^)]+\): the server refused the credentials \(WRONGPASS/,
    );
    expect(run.output()).not.toContain('wrong');
    await expectNothingListening(Object.values(run.ports));
  });

  it('refuses a Redis that may evict queued jobs', async () => {
    const port = await freePort();
    const redis = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--maxmemory-policy',
        'allkeys-lru',
      ],
      { stdio: 'ignore' },
    );
    try {
      let run: Launch;
      do {
        run = await launch(
          { LOCAL_STATE_DIR: newStateDir(), REDIS_URL: `redis://127.0.0.1:${port}` },
          'deploy/local/src/preflight.ts',
        );
        await untilExit(run);
      } while (run.output().includes('nothing answers')); // redis-server still starting
      expect(run.child.exitCode).toBe(1);
      expect(run.output().trim()).toBe(
        `pnpm start: REDIS_URL (redis://127.0.0.1:${port}): its maxmemory-policy is allkeys-lru, ` +
          'so it may evict queued jobs and BullMQ needs noeviction. ' +
          'Set maxmemory-policy noeviction (redis.conf, or CONFIG SET maxmemory-policy noeviction)',
      );
    } finally {
      redis.kill('SIGKILL');
      await once(redis, 'exit');
    }
  });

  it('says how to get Redis when none answers and none is installed, before starting Postgres', async () => {
    const stateDir = newStateDir();
    const postgresPort = await freePort();
    const redisPort = await freePort();
    const run = await launch({
      LOCAL_STATE_DIR: stateDir,
      LOCAL_POSTGRES_PORT: String(postgresPort),
      LOCAL_REDIS_PORT: String(redisPort),
      PATH: stateDir, // a PATH without redis-server
    });
    expect(await untilExit(run)).toBe(1);
    const output = run.output();
    expect(output).toContain(
      `REDIS_URL is not set, nothing answers at 127.0.0.1:${redisPort}, and this machine has no redis-server`,
    );
    expect(output).toContain('sudo apt-get install redis-server');
    expect(output).toContain('brew install redis');
    expect(output).toContain('docker run');
    expect(output).toContain('REDIS_URL=redis://');
    expect(existsSync(path.join(stateDir, 'postgres'))).toBe(false);
    await expectNothingListening([...Object.values(run.ports), postgresPort, redisPort]);
  });
});
