export {
  AccountLimiter,
  hasLimits,
  type AccountLease,
  type AccountLimits,
  type AcquireRequest,
  type AcquireResult,
  type LimiterOptions,
} from './account-limiter.js';
