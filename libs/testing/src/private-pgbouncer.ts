import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './processes.js';
import { APP_START_TIMEOUT_MS, WaitAborted, waitFor } from './waiting.js';

/**
 * A PgBouncer of the test's own in transaction pooling, in front of the Postgres a URL
 * names, on a free port: it can be killed and started again (a restart mid-load) without
 * touching anyone else's. PgBouncer refuses to run as root: as root, it runs as `nobody`.
 * Debian's `pgbouncer` package (docs/scaling.md, "PgBouncer").
 */
export class PrivatePgBouncer {
  private process: ChildProcess | undefined;
  private directory = '';
  port = 0;

  /** @param serverUrl the Postgres behind it (trust authentication, as the test server's) */
  constructor(
    private readonly serverUrl: string,
    private readonly poolSize = 4,
  ) {}

  /** `database` through PgBouncer, flagged for the suite's pools (`?pgbouncer=true`). */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.host = `127.0.0.1:${this.port}`;
    url.searchParams.set('pgbouncer', 'true');
    return url.toString();
  }

  async start(): Promise<void> {
    if (!this.directory) await this.configure();
    const asRoot = process.getuid?.() === 0;
    this.process = spawn(
      binary(),
      [...(asRoot ? ['-u', 'nobody'] : []), path.join(this.directory, 'pgbouncer.ini')],
      { stdio: 'ignore' },
    );
    let failure = '';
    this.process.on('error', (error) => {
      failure = `PgBouncer did not start: ${error.message} (apt-get install pgbouncer)`;
    });
    await waitFor(
      () => {
        if (failure) throw new WaitAborted(failure);
        return listening(this.port);
      },
      { timeoutMs: APP_START_TIMEOUT_MS, intervalMs: 20, what: `PgBouncer on ${this.port}` },
    );
  }

  /** SIGKILL: every client connection and server connection is cut at once. */
  async stop(): Promise<void> {
    const running = this.process;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGKILL');
    await exited;
  }

  async remove(): Promise<void> {
    await this.stop();
    if (this.directory) await rm(this.directory, { recursive: true, force: true });
  }

  private async configure(): Promise<void> {
    this.port = await freePort();
    this.directory = await mkdtemp(path.join(tmpdir(), 'sy-pgbouncer-'));
    await chmod(this.directory, 0o755);
    const server = new URL(this.serverUrl);
    const users = path.join(this.directory, 'users.txt');
    await writeFile(users, `"${decodeURIComponent(server.username || 'postgres')}" ""\n`);
    await writeFile(
      path.join(this.directory, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=${server.hostname} port=${server.port || 5432}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${this.port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${users}`,
        'pool_mode = transaction',
        `default_pool_size = ${this.poolSize}`,
        'max_client_conn = 200',
        // Sent by some drivers at connection; the suite's pools send none of these.
        'ignore_startup_parameters = extra_float_digits',
        '',
      ].join('\n'),
    );
  }
}

function binary(): string {
  return existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : 'pgbouncer';
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
