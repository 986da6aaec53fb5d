import { Injectable } from '@nestjs/common';
import { PrismaService, type CreditCodeBatch, type CreditPlan } from '@switchyard/db';
import { CreditPlansRepository } from './credit-plans.repository.js';
import { CreditsRepository, type ChangeResult } from './credits.repository.js';

// Redemption code batches and their codes (docs/credits.md, "Redemption codes"). A code is
// claimed by one conditional UPDATE in the transaction of what it gives, credits or a plan,
// so of concurrent redemptions of one code exactly one succeeds.

export interface BatchWithUse extends CreditCodeBatch {
  redeemed: number;
  plan: CreditPlan | null;
}

export type Redemption = ChangeResult & { plan: CreditPlan | null };

@Injectable()
export class CreditCodesRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly credits: CreditsRepository,
    private readonly plans: CreditPlansRepository,
  ) {}

  createBatch(
    batch: {
      credits: number;
      planId: number | null;
      note: string;
      expiresAt: Date | null;
      createdById: number;
    },
    codes: { codeHash: string; lastFour: string }[],
  ): Promise<CreditCodeBatch & { plan: CreditPlan | null }> {
    return this.prisma.creditCodeBatch.create({
      data: { ...batch, count: codes.length, codes: { create: codes } },
      include: { plan: true },
    });
  }

  async batches(skip: number, take: number): Promise<{ rows: BatchWithUse[]; total: number }> {
    const [rows, total] = await this.prisma.$transaction([
      this.prisma.creditCodeBatch.findMany({
        orderBy: { id: 'desc' },
        skip,
        take,
        include: { plan: true },
      }),
      this.prisma.creditCodeBatch.count(),
    ]);
    const used = await this.prisma.creditCode.groupBy({
      by: ['batchId'],
      where: { batchId: { in: rows.map((row) => row.id) }, redeemedAt: { not: null } },
      _count: { _all: true },
    });
    const byBatch = new Map(used.map((row) => [row.batchId, row._count._all]));
    return { rows: rows.map((row) => ({ ...row, redeemed: byBatch.get(row.id) ?? 0 })), total };
  }

  /**
   * Marks the code redeemed by the user and gives what its batch gives, in one transaction:
   * its credits as a `redeem` entry, or its plan (the user's plan from now, its first period
   * added as the `redeem` entry). Null when no unexpired, unredeemed code has this hash, or
   * its plan is disabled. Concurrent redemptions of one code wait on its row lock, and the
   * losers find it redeemed.
   */
  redeem(codeHash: string, userId: number, now: Date): Promise<Redemption | null> {
    return this.prisma.$transaction(async (tx) => {
      const claimed = await tx.$queryRaw<
        { credits: number; batchId: number; planId: number | null }[]
      >`
        UPDATE "CreditCode" AS c SET "redeemedById" = ${userId}, "redeemedAt" = now()
        FROM "CreditCodeBatch" AS b LEFT JOIN "CreditPlan" AS p ON p."id" = b."planId"
        WHERE c."batchId" = b."id" AND c."codeHash" = ${codeHash}
          AND c."redeemedAt" IS NULL AND (b."expiresAt" IS NULL OR b."expiresAt" > now())
          AND (p."id" IS NULL OR NOT p."disabled")
        RETURNING b."credits" AS "credits", b."id" AS "batchId", b."planId" AS "planId"`;
      const code = claimed[0];
      if (!code) return null;
      const reason = `code from batch ${code.batchId}`;
      if (code.planId === null) {
        const result = await this.credits.changeIn(tx, {
          userId,
          kind: 'redeem',
          amount: code.credits,
          reason,
        });
        return { ...result, plan: null };
      }
      const plan = await tx.creditPlan.findUniqueOrThrow({ where: { id: code.planId } });
      const result = await this.plans.subscribeIn(tx, userId, plan, now, null, {
        kind: 'redeem',
        reason,
      });
      return { ...result, plan };
    });
  }
}
