export { linesMatching, sourceFiles, type SourceQuery } from './conventions.js';
export {
  createTestDatabase,
  dropTestDatabase,
  holdRowLocks,
  query,
  type TestDatabase,
} from './databases.js';
export {
  freePort,
  repositoryRoot,
  startApp,
  waitForHttp,
  type AppName,
  type AppProcess,
  type StartOptions,
} from './processes.js';
export { PrivatePgBouncer } from './private-pgbouncer.js';
export { PrivatePostgres } from './private-postgres.js';
export { clearRedisNamespace, SpecRedis, testRedisPrefix, type SpecRedisClient } from './redis.js';
export {
  APP_START_TIMEOUT_MS,
  WAIT_TIMEOUT_MS,
  WaitAborted,
  waitFor,
  type WaitOptions,
} from './waiting.js';
