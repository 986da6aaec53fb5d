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
  allowedByList,
  compareSpecificity,
  isModelName,
  isModelPattern,
  isWildcard,
  matchesModel,
  MAX_MODEL_LENGTH,
  MODEL_NAME_RULE,
  MODEL_PATTERN_RULE,
  modelMatchSql,
  mostSpecificMatch,
  parseModelPattern,
  type ModelPattern,
  type ModelPatternKind,
} from './model-pattern.js';
export {
  RoutingTable,
  weightedOrder,
  type Candidate,
  type CandidateQuery,
} from './routing-table.js';
export { upstreamTarget } from './upstream-target.js';
