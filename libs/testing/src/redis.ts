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
