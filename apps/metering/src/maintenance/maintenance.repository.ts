import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService } from '@switchyard/db';
import { isoDay } from './utc-days.js';

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
  async rollUp(from: Date, to: Date): Promise<RollUpCounts> {
    const [counts] = await this.prisma.$queryRaw<RollUpCounts[]>(Prisma.sql`
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

  async oldestLogBefore(cutoff: Date): Promise<Date | null> {
    const [row] = await this.prisma.$queryRaw<{ oldest: Date | null }[]>(Prisma.sql`
      SELECT min("requestedAt") AS "oldest" FROM "UsageLog" WHERE "requestedAt" < ${cutoff}`);
    return row?.oldest ?? null;
  }

  /** Deletes in chunks, so no single statement holds many locks or a long transaction. */
  async deleteLogsBefore(cutoff: Date, chunk: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      const count = await this.prisma.$executeRaw(Prisma.sql`
        DELETE FROM "UsageLog" WHERE "id" IN (
          SELECT "id" FROM "UsageLog" WHERE "requestedAt" < ${cutoff} LIMIT ${chunk})`);
      deleted += count;
      if (count < chunk) return deleted;
    }
  }
}
