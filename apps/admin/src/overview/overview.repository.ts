import { Injectable } from '@nestjs/common';
import {
  Prisma,
  PrismaService,
  ReportingDatabase,
  type Channel,
  type ChannelKey,
} from '@switchyard/db';
import { bucketStart, usageTotalsQuery, type UsageTotalsRow } from '../usage/usage-aggregate.js';
import { type SeriesSplit } from './overview.dto.js';

export interface SeriesRow extends UsageTotalsRow {
  bucket: Date;
}

/** Only so many channels are shown on the overview; the Channels page lists them all. */
const MAX_HEALTH_CHANNELS = 500;

@Injectable()
export class OverviewRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly reporting: ReportingDatabase,
  ) {}

  /**
   * Usage in `[from, to)` summed per bucket of `bucketSeconds` (aligned to the epoch) and
   * group, of one team when given: a report, read from the replica when there is one.
   */
  series(
    split: SeriesSplit,
    from: Date,
    to: Date,
    bucketSeconds: number,
    teamId?: number,
  ): Promise<SeriesRow[]> {
    return this.reporting.client.$queryRaw<SeriesRow[]>(
      usageTotalsQuery({
        bucket: bucketStart(bucketSeconds),
        key: split,
        where: [
          Prisma.sql`u."requestedAt" >= ${from}`,
          Prisma.sql`u."requestedAt" < ${to}`,
          ...(teamId ? [Prisma.sql`u."teamId" = ${teamId}`] : []),
        ],
      }),
    );
  }

  /** From the primary: a channel an administrator has just changed shows as changed. */
  channelsWithKeys(): Promise<(Channel & { keys: ChannelKey[] })[]> {
    return this.prisma.channel.findMany({
      include: { keys: { orderBy: { id: 'asc' } } },
      orderBy: [{ priority: 'desc' }, { id: 'asc' }],
      take: MAX_HEALTH_CHANNELS,
    });
  }
}
