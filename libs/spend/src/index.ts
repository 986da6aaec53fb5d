export {
  BLOCK_VALIDITY_MS,
  DEFAULT_HOLD_MS,
  DEFAULT_SETTLED_MS,
  SpendLedger,
  spendAccount,
  spendKeys,
  type BlockAsk,
  type Carve,
  type Charge,
  type ReserveResult,
  type SeedReader,
  type Settlement,
  type SpendLedgerOptions,
} from './spend-ledger.js';
export { SpendBlocks, type BlockReserveResult, type CarvedHold } from './spend-blocks.js';
