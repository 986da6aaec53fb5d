export {
  DEFAULT_HOLD_MS,
  DEFAULT_SETTLED_MS,
  SpendLedger,
  spendAccount,
  spendKeys,
  type Charge,
  type ReserveResult,
  type SeedReader,
  type Settlement,
  type SpendLedgerOptions,
} from './spend-ledger.js';
