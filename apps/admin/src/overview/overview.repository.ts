import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService, type Channel, type ChannelKey } from '@switchyard/db';
import { type SeriesSplit } from './overview.dto.js';

export interface SeriesRow {
  bucket: Date;
  key: string | null;
  label: string | null;
  requests: bigint;
  failures: bigint;
  promptTokens: bigint;
  completionTokens: bigint;
  cost: bigint;
}

const SPLIT_KEY: Record<SeriesSplit, Prisma.Sql> = {
  model: Prisma.sql`u.model`,
  token: Prisma.sql`u."tokenId"::text`,
  channel: Prisma.sql`u."channelId"::text`,
};

const SPLIT_LABEL: Record<SeriesSplit, Prisma.Sql> = {
  model: Prisma.sql`NULL::text`,
  token: Prisma.sql`max(t.name)`,
  channel: Prisma.sql`max(c.name)`,
};

/** Only so many channels are shown on the overview; the Channels page lists them all. */
const MAX_HEALTH_CHANNELS = 500;

@Injectable()
export class OverviewRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Usage in `[from, to)` summed per bucket of `bucketSeconds` (aligned to the epoch) and group. */
  series(split: SeriesSplit, from: Date, to: Date, bucketSeconds: number): Promise<SeriesRow[]> {
    const bucket = Prisma.sql`to_timestamp(floor(extract(epoch FROM u."requestedAt") / ${bucketSeconds}) * ${bucketSeconds})`;
    return this.prisma.$queryRaw<SeriesRow[]>`
      SELECT ${bucket} AS bucket,
             ${SPLIT_KEY[split]} AS key,
             ${SPLIT_LABEL[split]} AS label,
             count(*)::bigint AS requests,
             (count(*) FILTER (WHERE u.status >= 400))::bigint AS failures,
             coalesce(sum(u."promptTokens"), 0)::bigint AS "promptTokens",
             coalesce(sum(u."completionTokens"), 0)::bigint AS "completionTokens",
             coalesce(sum(u.cost), 0)::bigint AS cost
        FROM "UsageLog" u
        LEFT JOIN "Token" t ON t.id = u."tokenId"
        LEFT JOIN "Channel" c ON c.id = u."channelId"
       WHERE u."requestedAt" >= ${from} AND u."requestedAt" < ${to}
       GROUP BY 1, 2`;
  }

  channelsWithKeys(): Promise<(Channel & { keys: ChannelKey[] })[]> {
    return this.prisma.channel.findMany({
      include: { keys: { orderBy: { id: 'asc' } } },
      orderBy: [{ priority: 'desc' }, { id: 'asc' }],
      take: MAX_HEALTH_CHANNELS,
    });
  }
}
