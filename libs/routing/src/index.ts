export {
  AccountLimiter,
  hasLimits,
  type AccountLease,
  type AccountLimits,
  type AcquireRequest,
  type AcquireResult,
  type LimiterOptions,
} from './account-limiter.js';
export {
  RoutingTable,
  weightedOrder,
  type Candidate,
  type CandidateQuery,
} from './routing-table.js';
export { upstreamTarget } from './upstream-target.js';
