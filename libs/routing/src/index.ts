export {
  AccountLimiter,
  hasLimits,
  type AccountLease,
  type AccountLimits,
  type AcquireRequest,
  type AcquireResult,
} from './account-limiter.js';
export { allowedByList, isWildcard, matchesModel } from './model-match.js';
export {
  RoutingTable,
  weightedOrder,
  type Candidate,
  type CandidateQuery,
} from './routing-table.js';
export { upstreamTarget } from './upstream-target.js';
