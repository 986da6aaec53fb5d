import { Injectable } from '@nestjs/common';
import { type SqlClient } from '@switchyard/db/sql';
import { quotaSpentSql } from '@switchyard/domain';

/** `[id, cost in micro-dollars, requests]` per token, channel or key, in id order. */
export type UsageTotals = [id: number, cost: string, requests: number][];

export interface ExhaustedToken {
  tokenId: number;
  keyHash: string;
}

/** A token's used quota as committed; null quota: unlimited. */
export interface TokenSpend {
  tokenId: number;
  usedQuota: number;
  limited: boolean;
}

export interface TokensAdded {
  /** Enabled tokens now at or over their quota. */
  runOut: number[];
  /** Every token added to, with its used quota after (what spend holds settle against). */
  spent: TokenSpend[];
}

/**
 * The usage counters of tokens, channels and keys, added to inside the caller's settlement
 * transaction (a plain-SQL one: settlements run several times a second, and the Prisma
 * client's query interpreter cost more CPU than Postgres did, docs/performance.md).
 * Counters are not a change an administrator makes or must re-read before editing, so
 * they move neither `version` nor `updatedAt`; running out of quota is, so `markExhausted`
 * moves both. Rows are locked in id order (the caller adds tokens, then channels, then
 * keys), so concurrent batches wait for each other instead of deadlocking. Each statement
 * takes the batch as one JSON parameter (Postgres parses it far faster than the driver
 * binds thousands of array elements) and is prepared once per connection, by name.
 */
@Injectable()
export class UsageCounters {
  /** Adds cost to tokens' used quota. */
  async addToTokens(client: SqlClient, totals: UsageTotals): Promise<TokensAdded> {
    if (totals.length === 0) return { runOut: [], spent: [] };
    const { rows } = await client.query<{
      id: number;
      runOut: boolean;
      used: string;
      limited: boolean;
    }>({
      name: 'usage-counters.add-to-tokens',
      text: ADD_TO_TOKENS,
      values: [JSON.stringify(totals)],
    });
    return {
      runOut: rows.filter((row) => row.runOut).map((row) => row.id),
      spent: rows.map((row) => ({
        tokenId: row.id,
        usedQuota: Number(row.used),
        limited: row.limited,
      })),
    };
  }

  /** The used quota of limited tokens, as committed (micro-dollars fit a number exactly). */
  async spentOf(client: SqlClient, tokenIds: number[]): Promise<TokenSpend[]> {
    if (tokenIds.length === 0) return [];
    const { rows } = await client.query<{ id: number; used: string }>({
      name: 'usage-counters.spent-of',
      text: `SELECT id, "usedQuota"::text AS used FROM "Token" WHERE id = ANY($1::int[]) AND quota IS NOT NULL`,
      values: [tokenIds],
    });
    return rows.map((row) => ({ tokenId: row.id, usedQuota: Number(row.used), limited: true }));
  }

  addToChannels(client: SqlClient, totals: UsageTotals): Promise<void> {
    return addToTotals(client, ADD_TO_CHANNELS, totals);
  }

  addToKeys(client: SqlClient, totals: UsageTotals): Promise<void> {
    return addToTotals(client, ADD_TO_KEYS, totals);
  }

  /** Moves enabled tokens to `exhausted`; returns those it moved. */
  async markExhausted(client: SqlClient, tokenIds: number[]): Promise<ExhaustedToken[]> {
    if (tokenIds.length === 0) return [];
    const { rows } = await client.query<ExhaustedToken>({
      name: 'usage-counters.mark-exhausted',
      text: `
        UPDATE "Token"
        SET "status" = 'exhausted', "updatedAt" = CURRENT_TIMESTAMP, "version" = "version" + 1
        WHERE "id" = ANY($1::int[]) AND "status" = 'enabled'
        RETURNING "id" AS "tokenId", "keyHash"`,
      values: [tokenIds],
    });
    return rows;
  }
}

const ADD_TO_TOKENS = `
  WITH d AS (
    SELECT (x->>0)::int AS "id", (x->>1)::bigint AS "cost"
    FROM jsonb_array_elements($1::jsonb) x
  ),
  locked AS MATERIALIZED (
    SELECT "id" FROM "Token" WHERE "id" IN (SELECT "id" FROM d) ORDER BY "id" FOR NO KEY UPDATE
  )
  UPDATE "Token" t
  SET "usedQuota" = t."usedQuota" + d."cost"
  FROM locked l JOIN d ON d."id" = l."id"
  WHERE t."id" = l."id"
  RETURNING t."id",
    t."status" = 'enabled' AND ${quotaSpentSql('t')} AS "runOut",
    t."usedQuota"::text AS "used", t."quota" IS NOT NULL AS "limited"`;

const ADD_TO_CHANNELS = addToTotalsStatement('Channel');
const ADD_TO_KEYS = addToTotalsStatement('ChannelKey');

async function addToTotals(
  client: SqlClient,
  statement: { name: string; text: string },
  totals: UsageTotals,
): Promise<void> {
  if (totals.length > 0) await client.query({ ...statement, values: [JSON.stringify(totals)] });
}

/** Adds cost and requests to channels or channel keys; the table name is never user input. */
function addToTotalsStatement(table: 'Channel' | 'ChannelKey'): { name: string; text: string } {
  return {
    name: `usage-counters.add-to-${table}`,
    text: `
    WITH d AS (
      SELECT (x->>0)::int AS "id", (x->>1)::bigint AS "cost", (x->>2)::bigint AS "requests"
      FROM jsonb_array_elements($1::jsonb) x
    ),
    locked AS MATERIALIZED (
      SELECT "id" FROM "${table}" WHERE "id" IN (SELECT "id" FROM d) ORDER BY "id" FOR NO KEY UPDATE
    )
    UPDATE "${table}" u
    SET "usedQuota" = u."usedQuota" + d."cost", "requestCount" = u."requestCount" + d."requests"
    FROM locked l JOIN d ON d."id" = l."id"
    WHERE u."id" = l."id"`,
  };
}
