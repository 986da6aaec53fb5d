import { AdminEnv } from './environment/admin.js';
import { ChatEnv } from './environment/chat.js';
import { EdgeEnv } from './environment/edge.js';
import { MeteringEnv } from './environment/metering.js';
import { MockUpstreamEnv } from './environment/mock-upstream.js';
import { RouterEnv } from './environment/router.js';
import { WebEnv } from './environment/web.js';

// Every environment variable the suite reads: one file per app in environment/, the pieces
// several apps read (base, Redis, database, sign-in throttling) once. Each app validates
// exactly one of the leaf classes at start-up.

export { AdminEnv } from './environment/admin.js';
export { BaseEnv, LOG_LEVELS, type LogLevel } from './environment/base.js';
export { ChatEnv } from './environment/chat.js';
export { SecretStoreEnv, StoreEnv } from './environment/database.js';
export { EdgeEnv, UNPRICED_MODEL_POLICIES, type UnpricedModelPolicy } from './environment/edge.js';
export { MeteringEnv } from './environment/metering.js';
export { MockUpstreamEnv } from './environment/mock-upstream.js';
export { RedisEnv } from './environment/redis.js';
export { RouterEnv } from './environment/router.js';
export { WebEnv } from './environment/web.js';

/** The leaf classes, one per app. */
export const APP_ENVIRONMENTS = {
  edge: EdgeEnv,
  router: RouterEnv,
  admin: AdminEnv,
  chat: ChatEnv,
  metering: MeteringEnv,
  web: WebEnv,
  'mock-upstream': MockUpstreamEnv,
} as const;

export type AppName = keyof typeof APP_ENVIRONMENTS;
