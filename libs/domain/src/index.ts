// The rules the gateway applies wherever they are needed, in one place: services, the
// dashboard and the chat web app import them from here, so none re-derives a rule. Nothing
// here imports Node, Redis or a database client (tsconfig.build.json compiles it without
// Node's types, and lint refuses such imports).
export { costOf, type TokenPrice } from './cost.js';
export {
  API_ERRORS,
  ApiError,
  GATEWAY_ERRORS,
  GatewayError,
  rateLimitDuration,
  type ApiErrorBody,
  type ApiErrorCode,
  type ApiErrorOptions,
  type GatewayErrorCode,
  type GatewayErrorOptions,
  type OpenAIErrorBody,
  type RateLimitState,
} from './errors.js';
export {
  allowedByList,
  compareSpecificity,
  coveredByList,
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
export { quotaSpent, quotaSpentSql, tokenStatusAfterEdit, type TokenStatusName } from './quota.js';
export { PriceTable, type PriceEntry, type PriceMatch, type ResolvedPrice } from './prices.js';
export {
  applyMultiplier,
  balanceAccount,
  budgetAccount,
  BUDGET_LEVELS,
  BUDGET_PERIODS,
  budgetSubject,
  isTimeZone,
  levelOfSubject,
  LIFETIME_START,
  parseBalanceAccount,
  parseBudgetAccount,
  periodEnd,
  periodSpan,
  periodStart,
  softThresholdReached,
  subjectsCovering,
  UNIT_MULTIPLIER,
  type BudgetLevelName,
  type BudgetOwners,
  type BudgetPeriodSpan,
  type BudgetPeriodName,
} from './budgets.js';
