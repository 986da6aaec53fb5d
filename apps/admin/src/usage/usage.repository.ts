import { Injectable } from '@nestjs/common';
import { Prisma, ReportingDatabase, type UsageLog } from '@switchyard/db';
import { UTC_DAY, usageTotalsQuery, type UsageTotalsRow } from './usage-aggregate.js';
import { COUNTED_AT_MOST, type SummaryGroup } from './usage.dto.js';

export interface UsageFilter {
  tokenId?: number;
  channelId?: number;
  teamId?: number;
  /** Only requests of tokens this account owns (a member's own usage). */
  ownerId?: number;
  model?: string;
  status?: number;
  from?: Date;
  to?: Date;
}

export type UsageLogWithNames = UsageLog & {
  token: { name: string } | null;
  channel: { name: string } | null;
};

const MAX_GROUPS = 1000;

/** Reports only: every read here goes to the read replica when there is one. */
@Injectable()
export class UsageRepository {
  constructor(private readonly reporting: ReportingDatabase) {}

  private get prisma() {
    return this.reporting.client;
  }

  async listNewestFirst(
    filter: UsageFilter,
    page: { skip: number; take: number },
  ): Promise<{ rows: UsageLogWithNames[]; total: number; totalCapped: boolean }> {
    const where: Prisma.UsageLogWhereInput = {
      ...(filter.tokenId ? { tokenId: filter.tokenId } : {}),
      ...(filter.channelId ? { channelId: filter.channelId } : {}),
      ...(filter.teamId ? { teamId: filter.teamId } : {}),
      ...(filter.ownerId ? { token: { ownerId: filter.ownerId } } : {}),
      ...(filter.model ? { model: filter.model } : {}),
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.from || filter.to
        ? {
            requestedAt: {
              ...(filter.from ? { gte: filter.from } : {}),
              ...(filter.to ? { lt: filter.to } : {}),
            },
          }
        : {}),
    };
    const [rows, counted] = await Promise.all([
      this.prisma.usageLog.findMany({
        where,
        include: { token: { select: { name: true } }, channel: { select: { name: true } } },
        orderBy: [{ requestedAt: 'desc' }, { id: 'desc' }],
        ...page,
      }),
      // Ordered as the filters' (x, requestedAt) indexes are, or Prisma orders by the
      // primary key, which sorts every match before it can stop counting.
      this.prisma.usageLog.count({
        where,
        orderBy: { requestedAt: 'desc' },
        take: COUNTED_AT_MOST + 1,
      }),
    ]);
    return {
      rows,
      total: Math.min(counted, COUNTED_AT_MOST),
      totalCapped: counted > COUNTED_AT_MOST,
    };
  }

  /** Requests, failures, tokens and cost per group over `[from, to)`. */
  summarize(
    groupBy: SummaryGroup,
    filter: Required<Pick<UsageFilter, 'from' | 'to'>> &
      Pick<UsageFilter, 'tokenId' | 'channelId' | 'teamId'>,
  ): Promise<UsageTotalsRow[]> {
    const conditions = [
      Prisma.sql`u."requestedAt" >= ${filter.from}`,
      Prisma.sql`u."requestedAt" < ${filter.to}`,
      ...(filter.tokenId ? [Prisma.sql`u."tokenId" = ${filter.tokenId}`] : []),
      ...(filter.channelId ? [Prisma.sql`u."channelId" = ${filter.channelId}`] : []),
      ...(filter.teamId ? [Prisma.sql`u."teamId" = ${filter.teamId}`] : []),
    ];
    const order = groupBy === 'day' ? Prisma.sql`key ASC` : Prisma.sql`cost DESC, key ASC`;
    const grouped = usageTotalsQuery({
      key: groupBy === 'day' ? UTC_DAY : groupBy,
      where: conditions,
    });
    return this.prisma.$queryRaw<
      UsageTotalsRow[]
    >`${grouped} ORDER BY ${order} LIMIT ${MAX_GROUPS}`;
  }
}
