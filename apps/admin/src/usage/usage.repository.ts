import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService, type UsageLog } from '@switchyard/db';
import { type SummaryGroup } from './usage.dto.js';

export interface UsageFilter {
  tokenId?: number;
  channelId?: number;
  model?: string;
  status?: number;
  from?: Date;
  to?: Date;
}

export type UsageLogWithNames = UsageLog & {
  token: { name: string } | null;
  channel: { name: string } | null;
};

export interface UsageGroupRow {
  key: string | null;
  label: string | null;
  requests: bigint;
  failures: bigint;
  promptTokens: bigint;
  completionTokens: bigint;
  cost: bigint;
}

const GROUP_KEY: Record<SummaryGroup, Prisma.Sql> = {
  day: Prisma.sql`to_char(u."requestedAt" AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  model: Prisma.sql`u.model`,
  token: Prisma.sql`u."tokenId"::text`,
  channel: Prisma.sql`u."channelId"::text`,
};

const GROUP_LABEL: Record<SummaryGroup, Prisma.Sql> = {
  day: Prisma.sql`NULL::text`,
  model: Prisma.sql`NULL::text`,
  token: Prisma.sql`max(t.name)`,
  channel: Prisma.sql`max(c.name)`,
};

const MAX_GROUPS = 1000;

@Injectable()
export class UsageRepository {
  constructor(private readonly prisma: PrismaService) {}

  async listNewestFirst(
    filter: UsageFilter,
    page: { skip: number; take: number },
  ): Promise<{ rows: UsageLogWithNames[]; total: number }> {
    const where: Prisma.UsageLogWhereInput = {
      ...(filter.tokenId ? { tokenId: filter.tokenId } : {}),
      ...(filter.channelId ? { channelId: filter.channelId } : {}),
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
    const [rows, total] = await Promise.all([
      this.prisma.usageLog.findMany({
        where,
        include: { token: { select: { name: true } }, channel: { select: { name: true } } },
        orderBy: [{ requestedAt: 'desc' }, { id: 'desc' }],
        ...page,
      }),
      this.prisma.usageLog.count({ where }),
    ]);
    return { rows, total };
  }

  /** Requests, failures, tokens and cost per group over `[from, to)`. */
  summarize(
    groupBy: SummaryGroup,
    filter: Required<Pick<UsageFilter, 'from' | 'to'>> & Pick<UsageFilter, 'tokenId' | 'channelId'>,
  ): Promise<UsageGroupRow[]> {
    const conditions = [
      Prisma.sql`u."requestedAt" >= ${filter.from}`,
      Prisma.sql`u."requestedAt" < ${filter.to}`,
      ...(filter.tokenId ? [Prisma.sql`u."tokenId" = ${filter.tokenId}`] : []),
      ...(filter.channelId ? [Prisma.sql`u."channelId" = ${filter.channelId}`] : []),
    ];
    const order = groupBy === 'day' ? Prisma.sql`key ASC` : Prisma.sql`cost DESC, key ASC`;
    return this.prisma.$queryRaw<UsageGroupRow[]>`
      SELECT ${GROUP_KEY[groupBy]} AS key,
             ${GROUP_LABEL[groupBy]} AS label,
             count(*)::bigint AS requests,
             (count(*) FILTER (WHERE u.status >= 400))::bigint AS failures,
             coalesce(sum(u."promptTokens"), 0)::bigint AS "promptTokens",
             coalesce(sum(u."completionTokens"), 0)::bigint AS "completionTokens",
             coalesce(sum(u.cost), 0)::bigint AS cost
        FROM "UsageLog" u
        LEFT JOIN "Token" t ON t.id = u."tokenId"
        LEFT JOIN "Channel" c ON c.id = u."channelId"
       WHERE ${Prisma.join(conditions, ' AND ')}
       GROUP BY 1
       ORDER BY ${order}
       LIMIT ${MAX_GROUPS}`;
  }
}
