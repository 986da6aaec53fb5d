import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { APP_START_TIMEOUT_MS, WaitAborted, waitFor } from './waiting.js';

// Starts the real, built apps as child processes, the way they run in production, and
// keeps what they log so tests can read it.

export const repositoryRoot = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../..',
);

export type AppName = 'edge' | 'router' | 'admin' | 'chat' | 'metering' | 'web' | 'mock-upstream';

const PORT_VARIABLE: Record<AppName, string> = {
  edge: 'EDGE_PORT',
  router: 'ROUTER_OPS_PORT',
  admin: 'ADMIN_PORT',
  chat: 'CHAT_PORT',
  metering: 'METERING_OPS_PORT',
  web: 'WEB_PORT',
  'mock-upstream': 'MOCK_UPSTREAM_PORT',
};

/** The operations port (`/metrics`) of the apps whose main port is public. */
const OPS_PORT_VARIABLE: Partial<Record<AppName, string>> = {
  edge: 'EDGE_OPS_PORT',
  admin: 'ADMIN_OPS_PORT',
  chat: 'CHAT_OPS_PORT',
  web: 'WEB_OPS_PORT',
};

/**
 * A port nothing listens on, for a server the caller starts next. Chosen below the kernel's
 * range of ephemeral ports: a port from that range (what `listen(0)` hands out) may become
 * the local end of any process's outgoing connection before the server binds it, and the
 * suite opens thousands of those. A port is checked free by binding it, and handed out once
 * in RESERVED_FOR_MS by all the test processes of the machine together (Jest's workers, the
 * packages' runs side by side): one never takes a port another has handed out but whose
 * server has not bound it yet.
 */
export async function freePort(): Promise<number> {
  const [low, high] = [EPHEMERAL_PORTS_START - LISTEN_PORTS, EPHEMERAL_PORTS_START - 1];
  mkdirSync(RESERVATIONS, { recursive: true });
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const port = low + Math.floor(Math.random() * (high - low + 1));
    if (reserve(port) && (await bindable(port))) return port;
  }
  throw new Error(`no free port found between ${low} and ${high}`);
}

/** Where the kernel's ephemeral ports start (Linux); 32768, its default, elsewhere. */
const EPHEMERAL_PORTS_START = (() => {
  try {
    const [start] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/);
    return Math.max(Number(start) || 32_768, 2_048);
  } catch {
    return 32_768;
  }
})();
/** How many ports below that range the tests use. */
const LISTEN_PORTS = Math.min(16_384, EPHEMERAL_PORTS_START - 1_025);
/** One file per port handed out, named by the port, made only if it is not there. */
const RESERVATIONS = path.join(tmpdir(), 'switchyard-test-ports');
/** Far longer than a server takes to bind the port it was given. */
const RESERVED_FOR_MS = 10 * 60_000;

/** Claims `port`, unless a test process of this machine claimed it within RESERVED_FOR_MS. */
function reserve(port: number): boolean {
  const file = path.join(RESERVATIONS, String(port));
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    try {
      if (Date.now() - statSync(file).mtimeMs < RESERVED_FOR_MS) return false;
      // A claim that old is over: its server bound the port long ago, or never will.
      rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

async function bindable(port: number): Promise<boolean> {
  const server = createServer();
  try {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return true;
  } catch {
    return false;
  } finally {
    server.close();
  }
}

export interface AppProcess {
  name: AppName;
  port: number;
  url: string;
  /** Where its `/metrics` is served: its operations port, or `url` when it has none. */
  opsUrl: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Sends a signal and resolves with the exit code once the process has ended. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartOptions {
  env?: Record<string, string | undefined>;
  port?: number;
  /** Path that must answer 200 before the app counts as started. */
  readyPath?: string;
  timeoutMs?: number;
  /** Pins the process to these CPUs (`taskset -c`), for benchmarks. */
  cpus?: string;
  /** V8 flags, as the deployment passes them. */
  nodeFlags?: string[];
  /** Another checkout whose built app to run (a benchmark's baseline); this one by default. */
  root?: string;
  /**
   * Another entry point started as the app, with its ports and environment (a benchmark's
   * stand-in for it); the app's own `dist/main.js` by default.
   */
  entry?: string;
}

export async function startApp(name: AppName, options: StartOptions = {}): Promise<AppProcess> {
  const port = options.port ?? (await freePort());
  const opsVariable = OPS_PORT_VARIABLE[name];
  const opsPort =
    opsVariable === undefined ? port : Number(options.env?.[opsVariable] ?? (await freePort()));
  const env: Record<string, string | undefined> = {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    BIND_ADDRESS: '127.0.0.1',
    [PORT_VARIABLE[name]]: String(port),
    ...(opsVariable === undefined ? {} : { [opsVariable]: String(opsPort) }),
    ...options.env,
  };
  const command = [
    process.execPath,
    ...(options.nodeFlags ?? []),
    options.entry ?? path.join(options.root ?? repositoryRoot, 'apps', name, 'dist', 'main.js'),
  ];
  // taskset execs node in place, so the child's pid is the app's (benchmarks read /proc/<pid>).
  if (options.cpus) command.unshift('taskset', '-c', options.cpus);
  const child = spawn(command[0]!, command.slice(1), {
    env: env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );

  const url = `http://127.0.0.1:${port}`;
  const app: AppProcess = {
    name,
    port,
    url,
    opsUrl: `http://127.0.0.1:${opsPort}`,
    child,
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
  const timeoutMs = options.timeoutMs ?? APP_START_TIMEOUT_MS;
  try {
    await waitForHttp(`${url}${options.readyPath ?? '/healthz'}`, timeoutMs, () => {
      if (child.exitCode !== null)
        throw new Error(`${name} exited with ${child.exitCode}:\n${output}`);
    });
  } catch (error) {
    // An app that did not come up is nobody's to stop later: left running, it keeps the
    // test runner from exiting.
    await app.stop('SIGKILL');
    throw error;
  }
  return app;
}

export async function waitForHttp(
  url: string,
  timeoutMs: number,
  check?: () => void,
): Promise<void> {
  await waitFor(
    async () => {
      try {
        check?.();
      } catch (error) {
        throw new WaitAborted(error instanceof Error ? error.message : String(error));
      }
      const response = await fetch(url).catch(() => undefined); // not listening yet
      return response?.ok;
    },
    { timeoutMs, intervalMs: 50, what: `an answer from ${url}` },
  );
}
