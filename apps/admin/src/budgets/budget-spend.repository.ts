import { type PrismaService } from '@switchyard/db';

/** What each subject spent in the period starting at the paired instant (metering's BudgetSpend). */
export async function spentInPeriods(
  prisma: PrismaService,
  subjects: string[],
  starts: Date[],
): Promise<{ subject: string; periodStart: Date; spent: bigint }[]> {
  return prisma.$queryRaw`
    SELECT s.subject, s."periodStart", s.spent
      FROM "BudgetSpend" s
      JOIN unnest(${subjects}::text[], ${starts}::timestamptz[]) AS w(subject, start)
        ON s.subject = w.subject AND s."periodStart" = w.start`;
}
