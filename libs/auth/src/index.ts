export {
  LOGIN_FAILURES_FORGOTTEN_AFTER_SECONDS,
  LoginThrottle,
  unlockLogin,
  type LoginAttempt,
  type LoginThrottleOptions,
} from './login-throttle.js';
export { withRedis } from './redis-unavailable.js';
export {
  SessionStore,
  type FoundSession,
  type IssuedSession,
  type SessionStoreOptions,
} from './session-store.js';
