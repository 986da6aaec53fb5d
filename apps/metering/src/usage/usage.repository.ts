import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@switchyard/db';
import { type UsageEntry } from './usage-entry.js';

export type EntryOutcome = 'billed' | 'duplicate';

export interface ExhaustedToken {
  tokenId: number;
  keyHash: string;
}

export interface Settlement {
  /** In the order of the entries given. */
  outcomes: EntryOutcome[];
  /** Limited tokens this settlement ran out of quota. */
  exhausted: ExhaustedToken[];
}

interface InsertedRow {
  requestId: string;
  tokenId: number | null;
  channelId: number | null;
  channelKeyId: number | null;
  cost: bigint;
}

interface SettledTokenRow {
  id: number;
  status: string;
  quota: bigint | null;
  usedQuota: bigint;
}

interface Totals {
  cost: bigint;
  requests: bigint;
}

const TRANSACTION = { maxWait: 10_000, timeout: 60_000 };

function addTo(totals: Map<number, Totals>, id: number | null, cost: bigint): void {
  if (id === null) return;
  const current = totals.get(id) ?? { cost: 0n, requests: 0n };
  current.cost += cost;
  current.requests += 1n;
  totals.set(id, current);
}

function sortedIds(totals: Map<number, Totals>): number[] {
  return [...totals.keys()].sort((a, b) => a - b);
}

/**
 * Settles a batch of usage in one transaction: the logs, then the token, channel and key
 * totals of the rows actually inserted (a request already logged is never billed again).
 * Rows are locked in one order everywhere (tokens, channels, keys; by id), so concurrent
 * batches wait for each other instead of deadlocking.
 */
@Injectable()
export class UsageRepository {
  constructor(private readonly prisma: PrismaService) {}

  async settle(entries: UsageEntry[]): Promise<Settlement> {
    const unique = [...new Map(entries.map((e) => [e.requestId, e])).values()].sort((a, b) =>
      a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : 0,
    );
    const { inserted, exhausted } = await this.prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<InsertedRow[]>(insertLogs(unique));
      const tokens = new Map<number, Totals>();
      const channels = new Map<number, Totals>();
      const keys = new Map<number, Totals>();
      for (const row of rows) {
        addTo(tokens, row.tokenId, row.cost);
        addTo(channels, row.channelId, row.cost);
        addTo(keys, row.channelKeyId, row.cost);
      }
      const settled =
        tokens.size > 0 ? await tx.$queryRaw<SettledTokenRow[]>(addToTokens(tokens)) : [];
      if (channels.size > 0) await tx.$executeRaw(addToChannels(channels));
      if (keys.size > 0) await tx.$executeRaw(addToKeys(keys));
      const runOut = settled
        .filter((t) => t.status === 'enabled' && t.quota !== null && t.usedQuota >= t.quota)
        .map((t) => t.id);
      const exhausted =
        runOut.length > 0 ? await tx.$queryRaw<ExhaustedToken[]>(markExhausted(runOut)) : [];
      return { inserted: new Set(rows.map((r) => r.requestId)), exhausted };
    }, TRANSACTION);

    const billed = new Set<string>();
    const outcomes = entries.map((entry): EntryOutcome => {
      if (!inserted.has(entry.requestId) || billed.has(entry.requestId)) return 'duplicate';
      billed.add(entry.requestId);
      return 'billed';
    });
    return { outcomes, exhausted };
  }
}

/**
 * One INSERT for the whole batch: each column travels as one array parameter. Ids of
 * tokens, channels and keys deleted since the request are stored as null, like the
 * foreign keys' ON DELETE SET NULL would have done.
 */
function insertLogs(entries: UsageEntry[]): Prisma.Sql {
  const column = <T>(pick: (e: UsageEntry) => T): T[] => entries.map(pick);
  return Prisma.sql`
    INSERT INTO "UsageLog" (
      "requestId", "tokenId", "channelId", "channelKeyId", "endpoint", "model", "upstreamModel",
      "promptTokens", "completionTokens", "tokensCounted", "cost", "status", "errorCode",
      "latencyMs", "firstByteMs", "stream", "attempts", "clientIp", "requestedAt")
    SELECT v."requestId", t."id", c."id", k."id", v."endpoint", v."model", v."upstreamModel",
      v."promptTokens", v."completionTokens", v."tokensCounted", v."cost", v."status", v."errorCode",
      v."latencyMs", v."firstByteMs", v."stream", v."attempts", v."clientIp", v."requestedAt"
    FROM unnest(
      ${column((e) => e.requestId)}::varchar[],
      ${column((e) => e.tokenId)}::int[],
      ${column((e) => e.channelId)}::int[],
      ${column((e) => e.keyId)}::int[],
      ${column((e) => e.endpoint)}::varchar[],
      ${column((e) => e.model)}::varchar[],
      ${column((e) => e.upstreamModel)}::varchar[],
      ${column((e) => e.promptTokens)}::int[],
      ${column((e) => e.completionTokens)}::int[],
      ${column((e) => e.tokensCounted)}::boolean[],
      ${column((e) => e.cost)}::bigint[],
      ${column((e) => e.status)}::int[],
      ${column((e) => e.errorCode)}::varchar[],
      ${column((e) => e.latencyMs)}::int[],
      ${column((e) => e.firstByteMs)}::int[],
      ${column((e) => e.stream)}::boolean[],
      ${column((e) => e.attempts)}::int[],
      ${column((e) => e.clientIp)}::varchar[],
      ${column((e) => e.requestedAt)}::timestamptz[]
    ) WITH ORDINALITY AS v(
      "requestId", "tokenId", "channelId", "keyId", "endpoint", "model", "upstreamModel",
      "promptTokens", "completionTokens", "tokensCounted", "cost", "status", "errorCode",
      "latencyMs", "firstByteMs", "stream", "attempts", "clientIp", "requestedAt", "position")
    LEFT JOIN "Token" t ON t."id" = v."tokenId"
    LEFT JOIN "Channel" c ON c."id" = v."channelId"
    LEFT JOIN "ChannelKey" k ON k."id" = v."keyId"
    ORDER BY v."position"
    ON CONFLICT ("requestId") DO NOTHING
    RETURNING "requestId", "tokenId", "channelId", "channelKeyId", "cost"`;
}

function totalsParameters(totals: Map<number, Totals>): {
  ids: number[];
  costs: bigint[];
  requests: bigint[];
} {
  const ids = sortedIds(totals);
  return {
    ids,
    costs: ids.map((id) => totals.get(id)?.cost ?? 0n),
    requests: ids.map((id) => totals.get(id)?.requests ?? 0n),
  };
}

function addToTokens(totals: Map<number, Totals>): Prisma.Sql {
  const { ids, costs } = totalsParameters(totals);
  return Prisma.sql`
    WITH locked AS MATERIALIZED (
      SELECT "id" FROM "Token" WHERE "id" = ANY(${ids}::int[]) ORDER BY "id" FOR NO KEY UPDATE
    )
    UPDATE "Token" t
    SET "usedQuota" = t."usedQuota" + d."cost"
    FROM locked l
    JOIN unnest(${ids}::int[], ${costs}::bigint[]) AS d("id", "cost") ON d."id" = l."id"
    WHERE t."id" = l."id"
    RETURNING t."id", t."status"::text AS "status", t."quota", t."usedQuota"`;
}

function addToChannels(totals: Map<number, Totals>): Prisma.Sql {
  const { ids, costs, requests } = totalsParameters(totals);
  return Prisma.sql`
    WITH locked AS MATERIALIZED (
      SELECT "id" FROM "Channel" WHERE "id" = ANY(${ids}::int[]) ORDER BY "id" FOR NO KEY UPDATE
    )
    UPDATE "Channel" c
    SET "usedQuota" = c."usedQuota" + d."cost", "requestCount" = c."requestCount" + d."requests"
    FROM locked l
    JOIN unnest(${ids}::int[], ${costs}::bigint[], ${requests}::bigint[]) AS d("id", "cost", "requests")
      ON d."id" = l."id"
    WHERE c."id" = l."id"`;
}

function addToKeys(totals: Map<number, Totals>): Prisma.Sql {
  const { ids, costs, requests } = totalsParameters(totals);
  return Prisma.sql`
    WITH locked AS MATERIALIZED (
      SELECT "id" FROM "ChannelKey" WHERE "id" = ANY(${ids}::int[]) ORDER BY "id" FOR NO KEY UPDATE
    )
    UPDATE "ChannelKey" k
    SET "usedQuota" = k."usedQuota" + d."cost", "requestCount" = k."requestCount" + d."requests"
    FROM locked l
    JOIN unnest(${ids}::int[], ${costs}::bigint[], ${requests}::bigint[]) AS d("id", "cost", "requests")
      ON d."id" = l."id"
    WHERE k."id" = l."id"`;
}

/** A state change an administrator must see: it moves `updatedAt` and the version. */
function markExhausted(tokenIds: number[]): Prisma.Sql {
  return Prisma.sql`
    UPDATE "Token"
    SET "status" = 'exhausted', "updatedAt" = CURRENT_TIMESTAMP, "version" = "version" + 1
    WHERE "id" = ANY(${tokenIds}::int[]) AND "status" = 'enabled'
    RETURNING "id" AS "tokenId", "keyHash"`;
}
