import { Injectable, Logger } from '@nestjs/common';
import { MeteringEnv } from '@switchyard/config';
import { Events } from '@switchyard/contracts';
import { isSqlTransactionConflict, SqlReadiness } from '@switchyard/db/sql';
import { type ExhaustedToken } from '@switchyard/gateway-store';
import { EventBus } from '@switchyard/messaging';
import { SpendLedger, spendAccount, type Carve, type Settlement } from '@switchyard/spend';
import { BudgetAlerts } from '../budgets/budget-alerts.js';
import { MicroBatcher } from './micro-batcher.js';
import { type UsageEntry } from './usage-entry.js';
import { UsageMetrics } from './usage.metrics.js';
import { UsageRepository, type EntryOutcome } from './usage.repository.js';

/** Batches written at the same time; rows are locked in one order, so they cannot deadlock. */
const BATCHES_IN_FLIGHT = 2;
const OUTAGE_RETRY_MS = { min: 200, max: 5_000 };
const TRANSIENT_RETRIES = 3;
/** Attempts to publish `token.exhausted` while Redis does not take it (about a minute). */
const PUBLISH_ATTEMPTS = 8;
/** Spend settlements kept for Redis to come back; past these, their holds just expire. */
const MAX_UNSETTLED = 10_000;
const UNSETTLED_RETRY_MS = 1_000;

/**
 * Settles usage entries in batches: each entry's promise resolves once the transaction
 * holding it has committed and the requests' spend holds have moved to settled spend (the
 * edge held their worst case, docs/architecture.md, "Spend holds"), then the tokens it ran
 * out of quota are announced.
 */
@Injectable()
export class UsageSettlement {
  private readonly logger = new Logger(UsageSettlement.name);
  private readonly batcher: MicroBatcher<UsageEntry, EntryOutcome>;
  /** Settlements Redis did not take: sent again (they are idempotent) until it does. */
  private unsettled: Settlement[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private settling = true;

  constructor(
    private readonly repository: UsageRepository,
    private readonly database: SqlReadiness,
    private readonly bus: EventBus,
    private readonly metrics: UsageMetrics,
    private readonly ledger: SpendLedger,
    private readonly alerts: BudgetAlerts,
    env: MeteringEnv,
  ) {
    this.batcher = new MicroBatcher<UsageEntry, EntryOutcome>(
      {
        write: (entries) => this.write(entries),
        isReachable: async () => {
          await this.database.check();
          return true;
        },
        isTransient: isSqlTransactionConflict,
      },
      {
        maxSize: env.USAGE_BATCH_SIZE,
        maxWaitMs: env.USAGE_BATCH_WAIT_MS,
        // Each job the worker holds submits once: when all of them wait, none can join.
        maxSubmitters: env.USAGE_CONCURRENCY,
        maxInFlight: BATCHES_IN_FLIGHT,
        outageRetryMs: OUTAGE_RETRY_MS,
        transientRetries: TRANSIENT_RETRIES,
        onBatch: (size, seconds) => {
          this.metrics.batchSize.observe(size);
          this.metrics.batchSeconds.observe(seconds);
        },
        onOutage: (unreachable) => {
          this.metrics.databaseReachable.set(unreachable ? 0 : 1);
          if (unreachable) {
            this.logger.warn('Postgres is unreachable: usage waits in memory and in the queue');
          } else {
            this.logger.log('Postgres is reachable again: settling the usage that waited');
          }
        },
      },
    );
  }

  /** Resolves with `billed`, or `duplicate` when the request had been billed before. */
  settle(entry: UsageEntry): Promise<EntryOutcome> {
    return this.batcher.submit(entry);
  }

  /** The entries of one job: each promise as `settle`'s. */
  settleAll(entries: UsageEntry[]): Promise<EntryOutcome>[] {
    return this.batcher.submitAll(entries);
  }

  /** Shutting down: write what is pending now, and hold nothing for an unreachable database. */
  stop(): void {
    this.batcher.stop();
    clearTimeout(this.retryTimer);
  }

  private async write(entries: UsageEntry[]): Promise<EntryOutcome[]> {
    const { outcomes, costs, exhausted, spends, budgetSettlements, alerts } =
      await this.repository.settle(entries);
    const settlements: Settlement[] = [
      ...spends.map((spend) => ({
        account: spendAccount('token', spend.tokenId),
        total: spend.usedQuota,
        requestIds: spend.requestIds,
      })),
      ...budgetSettlements,
    ];
    await this.settleHolds(
      withCarves([...settlements, ...heldElsewhere(entries, settlements)], entries),
    );
    for (const token of exhausted) void this.announce(token);
    // After the commit, off the request's path: a webhook never delays a settlement.
    if (alerts.length > 0) this.alerts.send(alerts);
    entries.forEach((entry, index) => {
      if (outcomes[index] === 'billed' && costs[index]! > 0n)
        this.metrics.countSpend(entry.model, costs[index]!);
    });
    return outcomes;
  }

  /**
   * Postgres is the record: while Redis does not take a settlement, its holds keep
   * counting against the quota (over-counting, never under), and it is sent again every
   * second; were metering to stop meanwhile, the holds expire (docs/architecture.md).
   */
  private async settleHolds(settlements: Settlement[]): Promise<void> {
    const batch = [...this.unsettled, ...settlements];
    this.unsettled = [];
    if (batch.length === 0) return;
    try {
      await this.ledger.settle(batch);
      if (!this.settling) this.logger.log('spend holds settle again');
      this.settling = true;
    } catch (error) {
      if (this.settling)
        this.logger.warn({
          message: 'spend holds not settled yet: Redis did not take them; retrying',
          reason: error instanceof Error ? error.message : String(error),
        });
      this.settling = false;
      this.unsettled = [...batch, ...this.unsettled].slice(-MAX_UNSETTLED);
      this.retryTimer ??= setTimeout(() => {
        this.retryTimer = undefined;
        void this.settleHolds([]);
      }, UNSETTLED_RETRY_MS).unref();
    }
  }

  private async announce(token: ExhaustedToken): Promise<void> {
    this.metrics.exhausted.inc();
    this.logger.log({ message: 'token ran out of quota', tokenId: token.tokenId });
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.bus.publish(Events.TokenExhausted, {
          tokenId: token.tokenId,
          keyHash: token.keyHash,
        });
        return;
      } catch (error) {
        if (attempt >= PUBLISH_ATTEMPTS) {
          this.logger.error({
            message: 'could not announce an exhausted token (it is exhausted in the database)',
            tokenId: token.tokenId,
            reason: error instanceof Error ? error.message : String(error),
          });
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt).unref());
      }
    }
  }
}

/**
 * The accounts the edge held requests on that this settlement does not settle (a budget
 * deleted or moved to another period while they ran): their holds are dropped, nothing more.
 */
function heldElsewhere(entries: UsageEntry[], settled: Settlement[]): Settlement[] {
  const settledAccounts = new Set(settled.map((s) => s.account));
  const dropped = new Map<string, string[]>();
  for (const entry of entries) {
    for (const account of entry.holds) {
      if (settledAccounts.has(account)) continue;
      const ids = dropped.get(account) ?? [];
      ids.push(entry.requestId);
      dropped.set(account, ids);
    }
  }
  return [...dropped].map(([account, requestIds]) => ({ account, total: null, requestIds }));
}

/**
 * Requests carved from an edge's block of holds have no hold of their own to drop: their
 * amount goes back to the block instead (docs/architecture.md, "Spend blocks").
 */
function withCarves(settlements: Settlement[], entries: UsageEntry[]): Settlement[] {
  const carvedBy = new Map<string, { block: string; amount: number }>();
  for (const entry of entries) if (entry.carved) carvedBy.set(entry.requestId, entry.carved);
  if (carvedBy.size === 0) return settlements;
  return settlements.map((settlement) => {
    const requestIds: string[] = [];
    const carves: Carve[] = [];
    for (const requestId of settlement.requestIds) {
      const carved = carvedBy.get(requestId);
      if (carved) carves.push({ ...carved, requestId });
      else requestIds.push(requestId);
    }
    return { ...settlement, requestIds, carves };
  });
}
