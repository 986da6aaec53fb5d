import { generateSecretKeySpec } from '@switchyard/security';
import { clearRedisNamespace, createTestDatabase, testRedisPrefix } from '@switchyard/testing';

/** A benchmark run's own database and Redis namespace, and the environment its apps start with. */
export interface BenchEnvironment {
  databaseUrl: string;
  redisUrl: string;
  /** The run's Redis namespace (REDIS_PREFIX). */
  prefix: string;
  secretKeys: string;
  env: Record<string, string>;
  /** Drops the database and clears the namespace. */
  remove(): Promise<void>;
}

export async function benchEnvironment(logLevel = 'warn'): Promise<BenchEnvironment> {
  const database = await createTestDatabase();
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = testRedisPrefix();
  const secretKeys = generateSecretKeySpec('bench');
  return {
    databaseUrl: database.url,
    redisUrl,
    prefix,
    secretKeys,
    env: {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: prefix,
      SECRET_KEYS: secretKeys,
      LOG_LEVEL: logLevel,
    },
    async remove() {
      await clearRedisNamespace(redisUrl, prefix);
      await database.drop();
    },
  };
}
