import { Injectable } from '@nestjs/common';
import { PrismaService, type ChatUsageDay } from '@switchyard/db';

/** Usage summed over some rows, as Prisma's aggregates give it. */
export interface UsageSums {
  requests: number;
  promptTokens: bigint;
  completionTokens: bigint;
}

export interface ModelUsageSums extends UsageSums {
  model: string;
}

export interface DayUsageSums extends UsageSums {
  day: Date;
  users: number;
}

const SUMS = { requests: true, promptTokens: true, completionTokens: true } as const;

const sums = (sum: {
  requests: number | null;
  promptTokens: bigint | null;
  completionTokens: bigint | null;
}): UsageSums => ({
  requests: sum.requests ?? 0,
  promptTokens: sum.promptTokens ?? 0n,
  completionTokens: sum.completionTokens ?? 0n,
});

@Injectable()
export class UsageRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The user's days with usage from `from` (a UTC day) on, oldest first. */
  daysSince(userId: number, from: Date): Promise<ChatUsageDay[]> {
    return this.prisma.chatUsageDay.findMany({
      where: { userId, day: { gte: from } },
      orderBy: { day: 'asc' },
    });
  }

  /** Usage per model from `from` on: one user's, or everyone's without `userId`. */
  async modelsSince(from: Date, userId?: number): Promise<ModelUsageSums[]> {
    const groups = await this.prisma.chatModelUsageDay.groupBy({
      by: ['model'],
      where: { userId, day: { gte: from } },
      _sum: SUMS,
    });
    return groups.map((group) => ({ model: group.model, ...sums(group._sum) }));
  }

  /** Everyone's usage per day from `from` on, with how many users it came from. */
  async everyoneDaysSince(from: Date): Promise<DayUsageSums[]> {
    const groups = await this.prisma.chatUsageDay.groupBy({
      by: ['day'],
      where: { day: { gte: from } },
      _sum: SUMS,
      _count: { userId: true },
    });
    return groups.map((group) => ({
      day: group.day,
      users: group._count.userId,
      ...sums(group._sum),
    }));
  }

  /** How many users sent a message from `from` on. */
  async usersSince(from: Date): Promise<number> {
    const [row] = await this.prisma.$queryRaw<[{ users: bigint }]>`
      SELECT COUNT(DISTINCT "userId") AS users FROM "ChatUsageDay" WHERE "day" >= ${from}`;
    return Number(row.users);
  }
}
