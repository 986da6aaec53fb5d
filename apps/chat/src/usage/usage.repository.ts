import { Injectable } from '@nestjs/common';
import { PrismaService, type ChatUsageDay } from '@switchyard/db';

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
}
