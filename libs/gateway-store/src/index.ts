// The gateway's own tables (channels, their keys, tokens and the audit log) and the
// invariants every writer keeps; the only code that writes them (docs/architecture.md,
// "Table owners").
export { CLI_ACTOR, ROUTER_ACTOR, SYSTEM_ACTOR, type Actor } from './actor.js';
export {
  AuditRepository,
  type AuditDetails,
  type AuditEntry,
  type AuditFilter,
  type AuditTarget,
} from './audit.repository.js';
export {
  BudgetCounters,
  type BalanceDebit,
  type BudgetUse,
  type CoveringBudget,
  type PeriodSpend,
  type SpendAddition,
  type TeamDebited,
  type TokenCover,
} from './budget-counters.js';
export { BalanceLedger, type BalanceChange, type BalanceResult } from './balance-ledger.js';
export { ChannelStore, type StoredChannel, type StoredKey } from './channel-store.js';
export {
  ChannelsRepository,
  type ChannelFields,
  type ChannelFilter,
  type ChannelWithKeys,
  type SealedKey,
} from './channels.repository.js';
export { type Db } from './db.js';
export { GatewayStoreModule } from './gateway-store.module.js';
export { TokensRepository, type TokenFilter, type TokenListStatus } from './tokens.repository.js';
export {
  UsageCounters,
  type ExhaustedToken,
  type TokenSpend,
  type TokensAdded,
  type UsageTotals,
} from './usage-counters.js';
