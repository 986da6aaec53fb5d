import { createTestDatabase } from './databases.js';
import { testRedisPrefix } from './redis.js';

// Jest globalSetup: one migrated database and one Redis namespace for this run. Workers
// start after this and inherit the variables.

export default async function setup(): Promise<void> {
  const database = await createTestDatabase();
  process.env.DATABASE_URL = database.url;
  process.env.REDIS_URL ??= 'redis://127.0.0.1:6379';
  process.env.REDIS_PREFIX = testRedisPrefix();
  process.env.SWITCHYARD_TEST_DATABASE = database.name;
}
