import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './processes.js';
import { APP_START_TIMEOUT_MS, WaitAborted, waitFor } from './waiting.js';
import pg from 'pg';

/**
 * A Postgres server of the test's own, from the machine's binaries, in a temporary
 * directory and on a free port, so it can be stopped and restarted without touching
 * anyone else's. Postgres refuses to run as root: as root, it runs as the `postgres` user.
 */
export class PrivatePostgres {
  private server: ChildProcess | undefined;
  private directory = '';
  port = 0;

  /** @param primary for a standby (`standby()`): the running server it copies and follows */
  constructor(private readonly primary?: PrivatePostgres) {}

  /**
   * A hot standby of this server: a base backup of it (`pg_basebackup -R`), started on a
   * port of its own, replaying its WAL as it streams, and answering reads only. Its replay
   * can be paused (`pg_wal_replay_pause()`) to hold it at a known point behind.
   */
  async standby(): Promise<PrivatePostgres> {
    if (!this.server) throw new Error('start the primary before its standby');
    const standby = new PrivatePostgres(this);
    await standby.start();
    return standby;
  }

  /** The server's maintenance database; `createTestDatabase` makes the test's own on it. */
  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  async start(): Promise<void> {
    if (!this.directory) await this.initialise();
    this.server = spawn(
      ...this.asOwner(binary('postgres'), [
        '-D',
        this.dataDirectory,
        '-p',
        String(this.port),
        '-k',
        this.directory,
        '-c',
        'listen_addresses=127.0.0.1',
        // Nothing here must survive a crash of the machine, and the tests restart it often.
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=200',
      ]),
      { stdio: 'ignore' },
    );
    await waitFor(
      async () => {
        if (this.server?.exitCode !== null) throw new WaitAborted('the private Postgres exited');
        const client = new pg.Client({ connectionString: this.url });
        try {
          await client.connect();
          return true;
        } catch {
          return undefined;
        } finally {
          await client.end().catch(() => undefined);
        }
      },
      { timeoutMs: APP_START_TIMEOUT_MS, what: `the private Postgres on port ${this.port}` },
    );
  }

  /** Stops it the way an operator's restart does (fast shutdown: sessions are cut). */
  async stop(signal: NodeJS.Signals = 'SIGINT'): Promise<void> {
    if (!this.server || this.server.exitCode !== null || this.server.signalCode !== null) return;
    const exited = once(this.server, 'exit');
    this.server.kill(signal);
    await exited;
  }

  async remove(): Promise<void> {
    await this.stop('SIGQUIT');
    if (this.directory) await rm(this.directory, { recursive: true, force: true });
  }

  private get dataDirectory(): string {
    return path.join(this.directory, 'data');
  }

  private async initialise(): Promise<void> {
    this.port = await freePort();
    this.directory = await mkdtemp(path.join(tmpdir(), 'sy-postgres-'));
    if (runningAsRoot()) chownSync(this.directory, postgresUser().uid, postgresUser().gid);
    if (this.primary) {
      // -R writes standby.signal and the primary's address: started, it is a streaming standby.
      const [command, args] = this.asOwner(binary('pg_basebackup'), [
        '-D',
        this.dataDirectory,
        '-h',
        '127.0.0.1',
        '-p',
        String(this.primary.port),
        '-U',
        'postgres',
        '-X',
        'stream',
        '-R',
        // An immediate checkpoint: the default spreads it over minutes of the primary's.
        '--checkpoint=fast',
        '--no-sync',
      ]);
      execFileSync(command, args, { stdio: 'ignore' });
      return;
    }
    const [command, args] = this.asOwner(binary('initdb'), [
      '-D',
      this.dataDirectory,
      '-U',
      'postgres',
      '-A',
      'trust',
      '--no-sync',
      '--no-instructions',
    ]);
    execFileSync(command, args, { stdio: 'ignore' });
  }

  /** The command line that runs `command` as the owner of the data directory. */
  private asOwner(command: string, args: string[]): [string, string[]] {
    if (!runningAsRoot()) return [command, args];
    const { uid, gid } = postgresUser();
    return [
      'setpriv',
      [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--', command, ...args],
    ];
  }
}

function runningAsRoot(): boolean {
  return process.getuid?.() === 0;
}

function postgresUser(): { uid: number; gid: number } {
  try {
    const id = (flag: string) =>
      Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }));
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    throw new Error('running as root, and there is no `postgres` user to run Postgres as');
  }
}

/** A program of the newest Postgres installed (Debian: /usr/lib/postgresql/<major>/bin). */
function binary(name: string): string {
  const majors = readdirSync('/usr/lib/postgresql')
    .filter((entry) => /^\d+$/.test(entry))
    .sort((a, b) => Number(b) - Number(a));
  if (majors.length === 0) throw new Error('no Postgres under /usr/lib/postgresql');
  return path.join('/usr/lib/postgresql', majors[0]!, 'bin', name);
}
