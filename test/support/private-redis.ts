import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { APP_START_TIMEOUT_MS, freePort, waitFor } from '@switchyard/testing';
import { Redis } from 'ioredis';

export interface PrivateRedisOptions {
  /**
   * Keeps an append-only file, as every deployment of the suite does (deploy/docker,
   * deploy/k8s, the launcher), so what was queued survives a restart; without it a
   * restart starts empty.
   */
  persistent?: boolean;
}

/** A Redis server of the test's own, so it can be stopped and restarted without touching anyone else's. */
export class PrivateRedis {
  private server: ChildProcess | undefined;
  private directory = '';
  port = 0;

  constructor(private readonly options: PrivateRedisOptions = {}) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.port ||= await freePort();
    const persistence = this.options.persistent
      ? ['--dir', (this.directory ||= await mkdtemp(path.join(tmpdir(), 'sy-redis-')))]
      : [];
    this.server = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        this.options.persistent ? 'yes' : 'no',
        '--maxmemory-policy',
        'noeviction',
        ...persistence,
      ],
      { stdio: 'ignore' },
    );
    const client = new Redis(this.url, {
      lazyConnect: true,
      retryStrategy: () => 50,
      maxRetriesPerRequest: null,
    });
    await client.connect().catch(() => undefined);
    // A persistent server answers LOADING while it reads its file back.
    await waitFor(async () => !/loading:1/.test(await client.info('persistence')), {
      timeoutMs: APP_START_TIMEOUT_MS,
      intervalMs: 20,
      what: `Redis on ${this.url} loaded`,
    });
    await client.ping();
    client.disconnect();
  }

  /** SIGKILL: the server is gone at once; SIGTERM: it writes its file out first, as a restart does. */
  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.server || this.server.exitCode !== null || this.server.signalCode !== null) return;
    const exited = once(this.server, 'exit');
    this.server.kill(signal);
    await exited;
  }

  async remove(): Promise<void> {
    await this.stop();
    if (this.directory) await rm(this.directory, { recursive: true, force: true });
  }
}
