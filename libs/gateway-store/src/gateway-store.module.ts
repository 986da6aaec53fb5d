import { Module } from '@nestjs/common';
import { AuditRepository } from './audit.repository.js';
import { BudgetCounters } from './budget-counters.js';
import { BalanceLedger } from './balance-ledger.js';
import { ChannelStore } from './channel-store.js';
import { ChannelsRepository } from './channels.repository.js';
import { TokensRepository } from './tokens.repository.js';
import { UsageCounters } from './usage-counters.js';

/**
 * The only writer of `Channel`, `ChannelKey`, `Token` and `AuditLog` (docs/architecture.md,
 * "Table owners"). Needs `DatabaseModule` (global) for Prisma; `UsageCounters` runs in the
 * caller's plain-SQL transaction (`@switchyard/db/sql`).
 */
@Module({
  providers: [
    AuditRepository,
    BudgetCounters,
    BalanceLedger,
    ChannelStore,
    ChannelsRepository,
    TokensRepository,
    UsageCounters,
  ],
  exports: [
    AuditRepository,
    BudgetCounters,
    BalanceLedger,
    ChannelStore,
    ChannelsRepository,
    TokensRepository,
    UsageCounters,
  ],
})
export class GatewayStoreModule {}
