import { Inject, Injectable } from '@nestjs/common';
import { inSqlTransaction, SQL_POOL, type SqlPool } from '@switchyard/db/sql';
import {
  UsageCounters,
  type ExhaustedToken,
  type TokenSpend,
  type UsageTotals,
} from '@switchyard/gateway-store';
import { type BudgetAlert } from '@switchyard/contracts';
import { applyMultiplier, UNIT_MULTIPLIER } from '@switchyard/domain';
import { type Settlement as SpendSettlement } from '@switchyard/spend';
import { BudgetSpend } from '../budgets/budget-spend.js';
import { type UsageEntry } from './usage-entry.js';

export type EntryOutcome = 'billed' | 'duplicate';

export interface Settlement {
  /** In the order of the entries given. */
  outcomes: EntryOutcome[];
  /** What each entry was billed, after its price group's multiplier, in the same order. */
  costs: bigint[];
  /** Limited tokens this settlement ran out of quota. */
  exhausted: ExhaustedToken[];
  /**
   * Per limited token of the batch: its used quota once committed, and the requests of the
   * batch (duplicates too: their first settlement may not have reached the spend ledger).
   */
  spends: (TokenSpend & { requestIds: string[] })[];
  /** Budget and balance accounts to settle, with their committed totals (docs/budgets.md). */
  budgetSettlements: SpendSettlement[];
  /** Soft alerts the batch fired, claimed and audited in its transaction. */
  alerts: BudgetAlert[];
}

interface InsertedTotals {
  /** JSON: request ids of the batch that were logged before. */
  duplicates: string;
  /** JSON: `[id, cost, requests]` per token, channel and key of the inserted rows, by id. */
  tokens: string;
  channels: string;
  keys: string;
}

/** An entry as billed: its team and price group multiplier applied. */
interface BilledEntry {
  entry: UsageEntry;
  teamId: number | null;
  multiplier: number;
  cost: bigint;
}

/**
 * Settles a batch of usage in one transaction: the logs (this app's table), then the token,
 * channel and key counters of the rows actually inserted, through the gateway store that
 * owns those tables (a request already logged is never billed again), then the budgets'
 * spend and the balances' debits (budget-spend.ts). Rows are locked in one order
 * everywhere (tokens, channels, keys; by id; then budget spend and teams), so concurrent
 * batches wait for each other instead of deadlocking. Plain SQL, each statement prepared
 * once per connection: a settlement is a handful of statements, and through the Prisma
 * client they cost the worker more CPU than Postgres spent running them (docs/performance.md).
 */
@Injectable()
export class UsageRepository {
  constructor(
    @Inject(SQL_POOL) private readonly pool: SqlPool,
    private readonly counters: UsageCounters,
    private readonly budgets: BudgetSpend,
  ) {}

  async settle(entries: UsageEntry[]): Promise<Settlement> {
    const unique = [...new Map(entries.map((e) => [e.requestId, e])).values()].sort((a, b) =>
      a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : 0,
    );
    const { duplicates, exhausted, spent, billed, budgetOutcome } = await inSqlTransaction(
      this.pool,
      async (client) => {
        // Read in the transaction, so a team's price group as committed prices its requests.
        const covers = await this.budgets.coverOf(client, [
          ...new Set(unique.map((e) => e.tokenId)),
        ]);
        const billed = unique.map((entry): BilledEntry => {
          const cover = covers.get(entry.tokenId);
          const multiplier = cover?.multiplier ?? UNIT_MULTIPLIER;
          return {
            entry,
            teamId: cover?.teamId ?? null,
            multiplier,
            cost: applyMultiplier(entry.cost, multiplier),
          };
        });
        const {
          rows: [totals],
        } = await client.query<InsertedTotals>({
          name: 'usage.insert-logs',
          text: INSERT_LOGS,
          values: [JSON.stringify(billed.map(row))],
        });
        if (!totals) throw new Error('the usage insert returned no totals');
        const { runOut, spent } = await this.counters.addToTokens(
          client,
          JSON.parse(totals.tokens) as UsageTotals,
        );
        await this.counters.addToChannels(client, JSON.parse(totals.channels) as UsageTotals);
        await this.counters.addToKeys(client, JSON.parse(totals.keys) as UsageTotals);
        const exhausted = await this.counters.markExhausted(client, runOut);
        // Tokens with only duplicates in the batch were not added to: read what they spent.
        const added = new Set(spent.map((s) => s.tokenId));
        const unread = [...new Set(unique.map((e) => e.tokenId))].filter((id) => !added.has(id));
        spent.push(...(await this.counters.spentOf(client, unread)));
        const duplicates = new Set(JSON.parse(totals.duplicates) as string[]);
        const budgetOutcome = await this.budgets.apply(
          client,
          billed.map(({ entry, cost }) => ({
            requestId: entry.requestId,
            tokenId: entry.tokenId,
            requestedAt: entry.requestedAt,
            cost,
            inserted: !duplicates.has(entry.requestId),
          })),
          covers,
        );
        return { duplicates, exhausted, spent, billed, budgetOutcome };
      },
    );

    const costOf = new Map(billed.map((b) => [b.entry.requestId, b.cost] as const));
    const seen = new Set<string>();
    const outcomes = entries.map((entry): EntryOutcome => {
      if (duplicates.has(entry.requestId) || seen.has(entry.requestId)) return 'duplicate';
      seen.add(entry.requestId);
      return 'billed';
    });
    const requestsOf = new Map<number, string[]>();
    for (const entry of unique) {
      const ids = requestsOf.get(entry.tokenId);
      if (ids) ids.push(entry.requestId);
      else requestsOf.set(entry.tokenId, [entry.requestId]);
    }
    const spends = spent
      .filter((s) => s.limited)
      .map((s) => ({ ...s, requestIds: requestsOf.get(s.tokenId) ?? [] }));
    return {
      outcomes,
      costs: entries.map((entry) => costOf.get(entry.requestId) ?? entry.cost),
      exhausted,
      spends,
      budgetSettlements: budgetOutcome.settlements,
      alerts: budgetOutcome.alerts,
    };
  }
}

/** One row per entry, in the order of the INSERT's column list below. */
function row({ entry: e, teamId, multiplier, cost }: BilledEntry): unknown[] {
  return [
    e.requestId,
    e.tokenId,
    e.channelId,
    e.keyId,
    e.endpoint,
    e.model,
    e.upstreamModel,
    e.promptTokens,
    e.completionTokens,
    e.tokensCounted,
    cost.toString(),
    e.status,
    e.errorCode,
    e.latencyMs,
    e.firstByteMs,
    e.stream,
    e.attempts,
    e.clientIp,
    e.requestedAt.toISOString(),
    e.cachedTokens,
    teamId,
    multiplier,
    e.requestedModel,
  ];
}

/**
 * One INSERT for the whole batch (`$1`: the rows as one JSON array), and the totals of what
 * it inserted. Ids of tokens, channels and keys deleted since the request are stored as
 * null, as the foreign keys' ON DELETE SET NULL would have done.
 */
const INSERT_LOGS = `
    WITH v AS (
      SELECT r->>0 AS "requestId", (r->>1)::int AS "tokenId", (r->>2)::int AS "channelId",
             (r->>3)::int AS "keyId", r->>4 AS "endpoint", r->>5 AS "model",
             r->>6 AS "upstreamModel", (r->>7)::int AS "promptTokens",
             (r->>8)::int AS "completionTokens", (r->>9)::boolean AS "tokensCounted",
             (r->>10)::bigint AS "cost", (r->>11)::int AS "status", r->>12 AS "errorCode",
             (r->>13)::int AS "latencyMs", (r->>14)::int AS "firstByteMs",
             (r->>15)::boolean AS "stream", (r->>16)::int AS "attempts", r->>17 AS "clientIp",
             (r->>18)::timestamptz AS "requestedAt", (r->>19)::int AS "cachedTokens",
             (r->>20)::int AS "teamId", (r->>21)::int AS "priceMultiplier",
             r->>22 AS "requestedModel", position
      FROM jsonb_array_elements($1::jsonb)
        WITH ORDINALITY AS e(r, position)
    ),
    inserted AS (
      INSERT INTO "UsageLog" (
        "requestId", "tokenId", "channelId", "channelKeyId", "endpoint", "model", "upstreamModel",
        "promptTokens", "completionTokens", "tokensCounted", "cost", "status", "errorCode",
        "latencyMs", "firstByteMs", "stream", "attempts", "clientIp", "requestedAt",
        "cachedTokens", "teamId", "priceMultiplier", "requestedModel")
      SELECT v."requestId", t."id", c."id", k."id", v."endpoint", v."model", v."upstreamModel",
        v."promptTokens", v."completionTokens", v."tokensCounted", v."cost", v."status",
        v."errorCode", v."latencyMs", v."firstByteMs", v."stream", v."attempts", v."clientIp",
        v."requestedAt", v."cachedTokens", v."teamId", v."priceMultiplier", v."requestedModel"
      FROM v
      LEFT JOIN "Token" t ON t."id" = v."tokenId"
      LEFT JOIN "Channel" c ON c."id" = v."channelId"
      LEFT JOIN "ChannelKey" k ON k."id" = v."keyId"
      ORDER BY v.position
      ON CONFLICT ("requestId", "requestedAt") DO NOTHING
      RETURNING "requestId", "tokenId", "channelId", "channelKeyId", "cost"
    )
    SELECT
      (SELECT coalesce(json_agg(v."requestId"), '[]') FROM v
        WHERE NOT EXISTS (SELECT 1 FROM inserted i WHERE i."requestId" = v."requestId"))::text
        AS "duplicates",
      (SELECT coalesce(json_agg(json_build_array(id, cost::text, n) ORDER BY id), '[]') FROM (
        SELECT "tokenId" AS id, sum("cost") AS cost, count(*) AS n FROM inserted
        WHERE "tokenId" IS NOT NULL GROUP BY 1) x)::text AS "tokens",
      (SELECT coalesce(json_agg(json_build_array(id, cost::text, n) ORDER BY id), '[]') FROM (
        SELECT "channelId" AS id, sum("cost") AS cost, count(*) AS n FROM inserted
        WHERE "channelId" IS NOT NULL GROUP BY 1) x)::text AS "channels",
      (SELECT coalesce(json_agg(json_build_array(id, cost::text, n) ORDER BY id), '[]') FROM (
        SELECT "channelKeyId" AS id, sum("cost") AS cost, count(*) AS n FROM inserted
        WHERE "channelKeyId" IS NOT NULL GROUP BY 1) x)::text AS "keys"`;
