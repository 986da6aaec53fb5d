import { Injectable } from '@nestjs/common';
import { Prisma } from '@switchyard/db';
import { type Db } from './db.js';

/** `[id, cost in micro-dollars, requests]` per token, channel or key, in id order. */
export type UsageTotals = [id: number, cost: string, requests: number][];

export interface SettledToken {
  id: number;
  status: string;
  quota: bigint | null;
  usedQuota: bigint;
}

export interface ExhaustedToken {
  tokenId: number;
  keyHash: string;
}

/**
 * The usage counters of tokens, channels and keys, added to inside the caller's settlement
 * transaction. Counters are not a change an administrator makes or must re-read before
 * editing, so they move neither `version` nor `updatedAt`; running out of quota is, so
 * `markExhausted` moves both. Rows are locked in id order (the caller adds tokens, then
 * channels, then keys), so concurrent batches wait for each other instead of deadlocking.
 * Each statement takes the batch as one JSON parameter: Postgres parses it far faster than
 * the driver binds thousands of array elements.
 */
@Injectable()
export class UsageCounters {
  /** Adds cost to tokens' used quota; returns each token as it now stands. */
  addToTokens(tx: Db, totals: UsageTotals): Promise<SettledToken[]> {
    if (totals.length === 0) return Promise.resolve([]);
    return tx.$queryRaw<SettledToken[]>`
      WITH d AS (
        SELECT (x->>0)::int AS "id", (x->>1)::bigint AS "cost"
        FROM jsonb_array_elements(${JSON.stringify(totals)}::jsonb) x
      ),
      locked AS MATERIALIZED (
        SELECT "id" FROM "Token" WHERE "id" IN (SELECT "id" FROM d) ORDER BY "id" FOR NO KEY UPDATE
      )
      UPDATE "Token" t
      SET "usedQuota" = t."usedQuota" + d."cost"
      FROM locked l JOIN d ON d."id" = l."id"
      WHERE t."id" = l."id"
      RETURNING t."id", t."status"::text AS "status", t."quota", t."usedQuota"`;
  }

  async addToChannels(tx: Db, totals: UsageTotals): Promise<void> {
    if (totals.length > 0) await tx.$executeRaw(addToTotals('Channel', totals));
  }

  async addToKeys(tx: Db, totals: UsageTotals): Promise<void> {
    if (totals.length > 0) await tx.$executeRaw(addToTotals('ChannelKey', totals));
  }

  /** Moves enabled tokens to `exhausted`; returns those it moved. */
  markExhausted(tx: Db, tokenIds: number[]): Promise<ExhaustedToken[]> {
    if (tokenIds.length === 0) return Promise.resolve([]);
    return tx.$queryRaw<ExhaustedToken[]>`
      UPDATE "Token"
      SET "status" = 'exhausted', "updatedAt" = CURRENT_TIMESTAMP, "version" = "version" + 1
      WHERE "id" IN (${Prisma.join(tokenIds)}) AND "status" = 'enabled'
      RETURNING "id" AS "tokenId", "keyHash"`;
  }
}

/** Adds cost and requests to channels or channel keys; the table name is never user input. */
function addToTotals(table: 'Channel' | 'ChannelKey', totals: UsageTotals): Prisma.Sql {
  const target = Prisma.raw(`"${table}"`);
  return Prisma.sql`
    WITH d AS (
      SELECT (x->>0)::int AS "id", (x->>1)::bigint AS "cost", (x->>2)::bigint AS "requests"
      FROM jsonb_array_elements(${JSON.stringify(totals)}::jsonb) x
    ),
    locked AS MATERIALIZED (
      SELECT "id" FROM ${target} WHERE "id" IN (SELECT "id" FROM d) ORDER BY "id" FOR NO KEY UPDATE
    )
    UPDATE ${target} u
    SET "usedQuota" = u."usedQuota" + d."cost", "requestCount" = u."requestCount" + d."requests"
    FROM locked l JOIN d ON d."id" = l."id"
    WHERE u."id" = l."id"`;
}
