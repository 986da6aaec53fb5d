import { randomBytes } from 'node:crypto';
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

/**
 * Resolves once the client can take commands. Our clients queue nothing while they connect
 * (`enableOfflineQueue: false`), so a spec's first command must wait for `ready`, however
 * long the first connection of a process takes.
 */
export async function redisReady(client: Redis, timeoutMs = 10_000): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('end', onEnd);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => done();
    const onEnd = () => done(new Error('the Redis connection ended before it was ready'));
    const timer = setTimeout(
      () => done(new Error(`Redis was not ready within ${timeoutMs} ms (${client.status})`)),
      timeoutMs,
    );
    client.on('ready', onReady);
    client.on('end', onEnd);
  });
}
