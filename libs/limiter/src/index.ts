export {
  AccountLimiter,
  hasLimits,
  type AccountLease,
  type AccountLimits,
  type AcquireRequest,
  type AcquireResult,
  type LimiterOptions,
} from './account-limiter.js';
export { FailureLimiter, type FailureAttempt, type FailureCount } from './failure-limiter.js';
