import { IntegerVariable, ListVariable, UrlVariable } from '../variables.js';
import { RedisEnv } from './redis.js';

// Postgres, and the keys of the secrets stored in it.

const SECRET_KEY = /^[A-Za-z0-9_-]{1,16}:[A-Za-z0-9+/]{43}=$/;

export class StoreEnv extends RedisEnv {
  @UrlVariable(['postgres', 'postgresql'])
  DATABASE_URL: string = 'postgresql://postgres@127.0.0.1:5432/switchyard';

  @IntegerVariable(1, 200)
  DATABASE_POOL_SIZE: number = 10;
}

export class SecretStoreEnv extends StoreEnv {
  /**
   * Keys that encrypt upstream secrets at rest: `id:base64-of-32-bytes`, comma-separated.
   * The first encrypts; all decrypt, so a key can be rotated in without downtime.
   */
  @ListVariable(SECRET_KEY, 'id:base64 keys of 32 bytes')
  SECRET_KEYS!: string[];
}
