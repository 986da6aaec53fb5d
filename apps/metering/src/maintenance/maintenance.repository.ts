import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@switchyard/db';
import { isoDay, startOfUtcMonth } from './utc-days.js';

/**
 * A partition DDL waits at most this long for its lock, then gives up until the next run:
 * queued behind a long report, it would otherwise hold every insert queued behind itself.
 */
const PARTITION_LOCK_TIMEOUT = '5s';

/** The Setting that remembers how far retention has gone. */
const COMPACTED_BEFORE = 'usage.compacted_before';

/** `UsageLog_2026_11`: the month partition's name, as the migration that made them names it. */
export function monthPartitionName(month: Date): string {
  return `UsageLog_${month.toISOString().slice(0, 7).replace('-', '_')}`;
}

/** Anything that runs queries: the service's client, or a transaction of it. */
type Db = Prisma.TransactionClient;

export interface MonthPartition {
  name: string;
  /** The month's first instant (included) and the next month's (excluded). */
  from: Date;
  until: Date;
}

/** Rolling up a month of logs before its partition is dropped may take minutes. */
const ROLL_UP_AND_DROP_TIMEOUT_MS = 30 * 60_000;

export interface RollUpCounts {
  /** Roll-up rows written (new or updated). */
  upserted: number;
  /** Roll-up rows of those days whose logs no longer exist under that key. */
  removed: number;
}

@Injectable()
export class MaintenanceRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Recomputes `UsageDaily` for the UTC days in [from, to) from `UsageLog`: per day, token,
   * channel and model (0 for no token or channel). Rows of those days that the logs no
   * longer support (their token was deleted since) are removed, so totals never count twice.
   */
  async rollUp(from: Date, to: Date, db: Db = this.prisma): Promise<RollUpCounts> {
    const [counts] = await db.$queryRaw<RollUpCounts[]>(Prisma.sql`
      WITH agg AS (
        SELECT ("requestedAt" AT TIME ZONE 'UTC')::date AS "day",
               COALESCE("tokenId", 0) AS "tokenId",
               COALESCE("channelId", 0) AS "channelId",
               "model",
               count(*)::int AS "requests",
               (count(*) FILTER (WHERE "status" >= 400))::int AS "failures",
               sum("promptTokens")::bigint AS "promptTokens",
               sum("completionTokens")::bigint AS "completionTokens",
               sum("cost")::bigint AS "cost"
        FROM "UsageLog"
        WHERE "requestedAt" >= ${from} AND "requestedAt" < ${to}
        GROUP BY 1, 2, 3, 4
      ),
      upserted AS (
        INSERT INTO "UsageDaily" ("day", "tokenId", "channelId", "model", "requests", "failures",
                                  "promptTokens", "completionTokens", "cost")
        SELECT * FROM agg
        ON CONFLICT ("day", "tokenId", "channelId", "model") DO UPDATE SET
          "requests" = EXCLUDED."requests",
          "failures" = EXCLUDED."failures",
          "promptTokens" = EXCLUDED."promptTokens",
          "completionTokens" = EXCLUDED."completionTokens",
          "cost" = EXCLUDED."cost"
        RETURNING 1
      ),
      removed AS (
        DELETE FROM "UsageDaily" d
        WHERE d."day" >= ${isoDay(from)}::date AND d."day" < ${isoDay(to)}::date
          AND NOT EXISTS (
            SELECT 1 FROM agg a
            WHERE a."day" = d."day" AND a."tokenId" = d."tokenId"
              AND a."channelId" = d."channelId" AND a."model" = d."model")
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM upserted)::int AS "upserted",
             (SELECT count(*) FROM removed)::int AS "removed"`);
    return { upserted: counts?.upserted ?? 0, removed: counts?.removed ?? 0 };
  }

  /**
   * Adds logs requested before `before` (days whose other logs retention already deleted:
   * a late record, a spool replayed after days) to their days' roll-ups, and deletes them,
   * in one statement, so a crash between the two cannot add them twice. Recomputing those
   * days instead would replace their totals with the stray rows alone.
   */
  async addStraysBefore(before: Date, db: Db = this.prisma): Promise<number> {
    const [row] = await db.$queryRaw<{ strays: number }[]>(Prisma.sql`
        WITH strays AS (
          DELETE FROM "UsageLog" WHERE "requestedAt" < ${before}
          RETURNING "requestedAt", "tokenId", "channelId", "model", "status",
                    "promptTokens", "completionTokens", "cost"
        ),
        agg AS (
          SELECT ("requestedAt" AT TIME ZONE 'UTC')::date AS "day",
                 COALESCE("tokenId", 0) AS "tokenId",
                 COALESCE("channelId", 0) AS "channelId",
                 "model",
                 count(*)::int AS "requests",
                 (count(*) FILTER (WHERE "status" >= 400))::int AS "failures",
                 sum("promptTokens")::bigint AS "promptTokens",
                 sum("completionTokens")::bigint AS "completionTokens",
                 sum("cost")::bigint AS "cost"
          FROM strays
          GROUP BY 1, 2, 3, 4
        ),
        added AS (
          INSERT INTO "UsageDaily" ("day", "tokenId", "channelId", "model", "requests",
                                    "failures", "promptTokens", "completionTokens", "cost")
          SELECT * FROM agg
          ON CONFLICT ("day", "tokenId", "channelId", "model") DO UPDATE SET
            "requests" = "UsageDaily"."requests" + EXCLUDED."requests",
            "failures" = "UsageDaily"."failures" + EXCLUDED."failures",
            "promptTokens" = "UsageDaily"."promptTokens" + EXCLUDED."promptTokens",
            "completionTokens" = "UsageDaily"."completionTokens" + EXCLUDED."completionTokens",
            "cost" = "UsageDaily"."cost" + EXCLUDED."cost"
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM strays)::int AS "strays", (SELECT count(*) FROM added)`);
    return row?.strays ?? 0;
  }

  /** Days before this have had their logs deleted by retention: their roll-ups are final. */
  async compactedBefore(): Promise<Date | null> {
    const row = await this.prisma.setting.findUnique({ where: { key: COMPACTED_BEFORE } });
    return typeof row?.value === 'string' ? new Date(row.value) : null;
  }

  async setCompactedBefore(day: Date, db: Db = this.prisma): Promise<void> {
    const value = day.toISOString();
    await db.setting.upsert({
      where: { key: COMPACTED_BEFORE },
      create: { key: COMPACTED_BEFORE, value },
      update: { value },
    });
  }

  /**
   * Creates the partition of the month `month` starts, unless it exists. Rows of that month
   * already in the default partition (none, while the partitions are created ahead) move
   * into it in the same transaction, as Postgres refuses to attach a range the default
   * partition holds rows of. Returns whether it was created.
   */
  async ensureMonthPartition(month: Date): Promise<boolean> {
    const name = monthPartitionName(month);
    const from = startOfUtcMonth(month);
    const to = startOfUtcMonth(month, 1);
    return this.prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`SET LOCAL lock_timeout = '${PARTITION_LOCK_TIMEOUT}'`);
      const [found] = await tx.$queryRaw<{ exists: boolean }[]>(
        Prisma.sql`SELECT to_regclass(${`"${name}"`}) IS NOT NULL AS "exists"`,
      );
      if (found?.exists) return false;
      const table = Prisma.raw(`"${name}"`);
      await tx.$executeRaw(
        Prisma.sql`CREATE TABLE ${table} (LIKE "UsageLog" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`,
      );
      await tx.$executeRaw(Prisma.sql`
        WITH moved AS (
          DELETE FROM "UsageLog_default"
          WHERE "requestedAt" >= ${from} AND "requestedAt" < ${to} RETURNING *)
        INSERT INTO ${table} SELECT * FROM moved`);
      await tx.$executeRaw(Prisma.sql`
        ALTER TABLE "UsageLog" ATTACH PARTITION ${table}
        FOR VALUES FROM (${Prisma.raw(`'${from.toISOString()}'`)})
        TO (${Prisma.raw(`'${to.toISOString()}'`)})`);
      return true;
    });
  }

  /** The month partitions whose every row is older than `cutoff`, oldest first. */
  async monthPartitionsEndingBy(cutoff: Date): Promise<MonthPartition[]> {
    const partitions = await this.prisma.$queryRaw<MonthPartition[]>(Prisma.sql`
      SELECT name, "from", "until" FROM (
        SELECT c.relname AS "name",
               substring(pg_get_expr(c.relpartbound, c.oid) FROM 'FROM [(]''([^'']+)''[)]')::timestamptz
                 AS "from",
               substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO [(]''([^'']+)''[)]')::timestamptz
                 AS "until"
        FROM pg_inherits i
        JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = '"UsageLog"'::regclass) AS bounds
      WHERE "until" <= ${cutoff}
      ORDER BY "until"`);
    return partitions;
  }

  /**
   * Rolls up the days of a month partition and drops it, in one transaction: the roll-ups
   * hold exactly the rows that go (docs/scaling.md, "Usage partitions"). The partition is
   * locked first, so a late log for that month waits, and lands after the drop in the
   * default partition, where the next run adds it as a stray; `compactedBefore` moves to the
   * month's end in the same transaction. Days before `compacted` (logs already gone, roll-ups
   * final) are not recomputed: their strays are added instead.
   */
  async rollUpAndDrop(
    partition: MonthPartition,
    compacted: Date | null,
  ): Promise<RollUpCounts & { from: Date }> {
    const table = Prisma.raw(`"${partition.name.replace(/"/g, '')}"`);
    return this.prisma.$transaction(
      async (tx) => {
        await tx.$executeRawUnsafe(`SET LOCAL lock_timeout = '${PARTITION_LOCK_TIMEOUT}'`);
        await tx.$executeRaw(Prisma.sql`LOCK TABLE ${table} IN SHARE MODE`);
        const from = compacted && compacted > partition.from ? compacted : partition.from;
        if (compacted) await this.addStraysBefore(compacted, tx);
        const counts =
          from < partition.until
            ? await this.rollUp(from, partition.until, tx)
            : { upserted: 0, removed: 0 };
        await tx.$executeRaw(Prisma.sql`DROP TABLE ${table}`);
        if (!compacted || compacted < partition.until) {
          await this.setCompactedBefore(partition.until, tx);
        }
        return { from, ...counts };
      },
      // A month of rows to roll up: longer than the interactive transaction's default 5 s.
      { timeout: ROLL_UP_AND_DROP_TIMEOUT_MS },
    );
  }
}
