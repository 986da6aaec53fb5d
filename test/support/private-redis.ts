import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '@switchyard/testing';
import { Redis } from 'ioredis';

/** A Redis server of the test's own, so it can be stopped and restarted without touching anyone else's. */
export class PrivateRedis {
  private server: ChildProcess | undefined;
  port = 0;

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.port ||= await freePort();
    this.server = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    const client = new Redis(this.url, {
      lazyConnect: true,
      retryStrategy: () => 50,
      maxRetriesPerRequest: null,
    });
    await client.connect().catch(() => undefined);
    await client.ping();
    client.disconnect();
  }

  async stop(): Promise<void> {
    if (!this.server || this.server.exitCode !== null) return;
    const exited = once(this.server, 'exit');
    this.server.kill('SIGKILL');
    await exited;
  }
}
