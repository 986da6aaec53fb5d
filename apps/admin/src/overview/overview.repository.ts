import { Injectable } from '@nestjs/common';
import { Prisma, PrismaService, type Channel, type ChannelKey } from '@switchyard/db';
import { bucketStart, usageTotalsQuery, type UsageTotalsRow } from '../usage/usage-aggregate.js';
import { type SeriesSplit } from './overview.dto.js';

export interface SeriesRow extends UsageTotalsRow {
  bucket: Date;
}

/** Only so many channels are shown on the overview; the Channels page lists them all. */
const MAX_HEALTH_CHANNELS = 500;

@Injectable()
export class OverviewRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Usage in `[from, to)` summed per bucket of `bucketSeconds` (aligned to the epoch) and group. */
  series(split: SeriesSplit, from: Date, to: Date, bucketSeconds: number): Promise<SeriesRow[]> {
    return this.prisma.$queryRaw<SeriesRow[]>(
      usageTotalsQuery({
        bucket: bucketStart(bucketSeconds),
        key: split,
        where: [Prisma.sql`u."requestedAt" >= ${from}`, Prisma.sql`u."requestedAt" < ${to}`],
      }),
    );
  }

  channelsWithKeys(): Promise<(Channel & { keys: ChannelKey[] })[]> {
    return this.prisma.channel.findMany({
      include: { keys: { orderBy: { id: 'asc' } } },
      orderBy: [{ priority: 'desc' }, { id: 'asc' }],
      take: MAX_HEALTH_CHANNELS,
    });
  }
}
