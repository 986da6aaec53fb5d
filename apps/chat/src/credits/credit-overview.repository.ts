import { Injectable } from '@nestjs/common';
import { PrismaService, type CreditKind } from '@switchyard/db';

// The ledger summed for the admin overview (docs/credits.md, "Overview"). Days are UTC days
// of `createdAt`; the ledger is the only source, so the figures agree with every balance.

export interface KindDaySum {
  day: Date;
  kind: CreditKind;
  amount: number;
}

export interface ModelSpendSum {
  model: string | null;
  spent: number;
}

@Injectable()
export class CreditOverviewRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Per UTC day and kind from `from` on: the positive entries (what was granted, and the
   * refunds) and the spends. Negative adjustments are neither granted nor spent.
   */
  async daysSince(from: Date): Promise<KindDaySum[]> {
    const rows = await this.prisma.$queryRaw<{ day: Date; kind: CreditKind; amount: bigint }[]>`
      SELECT ("createdAt" AT TIME ZONE 'UTC')::date AS "day", "kind", SUM("amount") AS "amount"
      FROM "CreditEntry"
      WHERE "createdAt" >= ${from} AND ("amount" > 0 OR "kind" = 'spend')
      GROUP BY 1, 2`;
    return rows.map((row) => ({ ...row, amount: Number(row.amount) }));
  }

  /**
   * Spends less refunds from `from` on, per model. A refund carries no model (the sweeper
   * returns a freeze knowing only its hold): it takes the model of the spend with its
   * `requestId`, so the models add up to the days' `spent`. Given `userId`, that user's
   * entries only (their Credits page).
   */
  async spendByModelSince(from: Date, userId: number | null = null): Promise<ModelSpendSum[]> {
    const rows = await this.prisma.$queryRaw<{ model: string | null; spent: bigint }[]>`
      SELECT COALESCE(e."model", s."model") AS "model", -SUM(e."amount") AS "spent"
      FROM "CreditEntry" e
      LEFT JOIN "CreditEntry" s
        ON e."kind" = 'refund' AND s."kind" = 'spend' AND s."requestId" = e."requestId"
      WHERE e."createdAt" >= ${from} AND e."kind" IN ('spend', 'refund')
        AND (${userId}::int IS NULL OR e."userId" = ${userId}::int)
      GROUP BY 1`;
    return rows.map((row) => ({ model: row.model, spent: Number(row.spent) }));
  }
}
