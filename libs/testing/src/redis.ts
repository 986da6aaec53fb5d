import { randomBytes } from 'node:crypto';
import { once, type EventEmitter } from 'node:events';
import { Redis } from 'ioredis';

export function testRedisPrefix(): string {
  return `t${randomBytes(4).toString('hex')}`;
}

/** Deletes every key of a test run's namespace. */
export async function clearRedisNamespace(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

/** What a spec's Redis client must offer: ioredis's own, or a client built on it. */
export interface SpecRedisClient extends EventEmitter {
  readonly status: string;
  disconnect(): void;
}

/**
 * One spec file's own Redis namespace (`REDIS_URL`, a fresh prefix) and the clients it
 * opens in it: `open` in `beforeAll`, `close` in `afterAll`, which empties the namespace.
 */
export class SpecRedis<C extends SpecRedisClient> {
  readonly url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  readonly prefix = testRedisPrefix();
  private readonly clients: C[] = [];

  constructor(private readonly connect: (options: { url: string; prefix: string }) => C) {}

  /**
   * `count` clients in the namespace, once connected: clients without an offline queue
   * refuse commands until then, however long a loaded machine takes.
   */
  async open(count: number): Promise<C[]> {
    const opened = Array.from({ length: count }, () =>
      this.connect({ url: this.url, prefix: this.prefix }),
    );
    this.clients.push(...opened);
    await Promise.all(
      opened.filter((client) => client.status !== 'ready').map((client) => once(client, 'ready')),
    );
    return opened;
  }

  async close(): Promise<void> {
    await clearRedisNamespace(this.url, this.prefix);
    for (const client of this.clients) client.disconnect();
  }

  /** The keys `pattern` matches inside the namespace, and outside of it (there should be none). */
  async keys(pattern: string): Promise<{ inside: string[]; outside: string[] }> {
    const raw = new Redis(this.url);
    try {
      return {
        inside: await raw.keys(`${this.prefix}:${pattern}`),
        outside: await raw.keys(pattern),
      };
    } finally {
      raw.disconnect();
    }
  }
}
