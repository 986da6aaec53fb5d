import { dropTestDatabase } from './databases.js';
import { clearRedisNamespace } from './redis.js';

export default async function teardown(): Promise<void> {
  const { SWITCHYARD_TEST_DATABASE: name, DATABASE_URL, REDIS_URL, REDIS_PREFIX } = process.env;
  if (name && DATABASE_URL) await dropTestDatabase(DATABASE_URL, name);
  if (REDIS_URL && REDIS_PREFIX) await clearRedisNamespace(REDIS_URL, REDIS_PREFIX);
}
