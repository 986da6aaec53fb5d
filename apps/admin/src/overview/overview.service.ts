import { Inject, Injectable } from '@nestjs/common';
import { ROUTING_SNAPSHOT_KEY, type RoutingSnapshot } from '@switchyard/contracts';
import { ChannelStatus, type Channel, type ChannelKey } from '@switchyard/db';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { toDate } from '../common/validators.js';
import {
  type ChannelHealth,
  type ChannelHealthResponse,
  type ChannelHealthState,
  type SeriesRange,
  type UsageSeriesLine,
  type UsageSeriesQuery,
  type UsageSeriesResponse,
} from './overview.dto.js';
import { OverviewRepository, type SeriesRow } from './overview.repository.js';

const HOUR = 3600;
/** Bucket width and count per range: about 24 to 30 points on every chart. */
const BUCKETS: Record<SeriesRange, { seconds: number; count: number }> = {
  '24h': { seconds: HOUR, count: 24 },
  '7d': { seconds: 6 * HOUR, count: 28 },
  '30d': { seconds: 24 * HOUR, count: 30 },
};
/** Lines drawn one by one; the rest are summed into "Other" so a chart stays readable. */
export const MAX_SERIES_LINES = 8;

/** What the overview page shows: usage over time, and each channel's health right now. */
@Injectable()
export class OverviewService {
  constructor(
    private readonly overview: OverviewRepository,
    @Inject(REDIS) private readonly redis: RedisClient,
  ) {}

  async series(query: UsageSeriesQuery): Promise<UsageSeriesResponse> {
    const { seconds, count } = BUCKETS[query.range];
    const until = (toDate(query.to) ?? new Date()).getTime();
    // The last bucket is the one holding `to`; buckets start on multiples of their width.
    const end = (Math.floor(until / 1000 / seconds) + 1) * seconds * 1000;
    const start = end - count * seconds * 1000;
    const rows = await this.overview.series(
      query.splitBy,
      new Date(start),
      new Date(end),
      seconds,
      query.teamId,
    );
    const buckets = Array.from({ length: count }, (_, i) => new Date(start + i * seconds * 1000));
    return {
      range: query.range,
      splitBy: query.splitBy,
      bucketSeconds: seconds,
      buckets,
      lines: toLines(rows, start, seconds, count),
    };
  }

  async health(): Promise<ChannelHealthResponse> {
    const [channels, stored] = await Promise.all([
      this.overview.channelsWithKeys(),
      this.redis.get(ROUTING_SNAPSHOT_KEY),
    ]);
    const snapshot = stored ? (JSON.parse(stored) as RoutingSnapshot) : null;
    const now = Date.now();
    return {
      snapshotVersion: snapshot?.version ?? null,
      snapshotAt: snapshot ? new Date(snapshot.generatedAt) : null,
      channels: channels.map((channel) => healthOf(channel, snapshot, now)),
    };
  }
}

function toLines(rows: SeriesRow[], start: number, seconds: number, count: number) {
  const totals = new Map<string | null, { label: string; cost: number; requests: number }>();
  for (const row of rows) {
    const total = totals.get(row.key) ?? {
      label: row.label ?? row.key ?? 'none',
      cost: 0,
      requests: 0,
    };
    total.cost += Number(row.cost);
    total.requests += Number(row.requests);
    totals.set(row.key, total);
  }
  const ranked = [...totals.entries()].sort(
    ([, a], [, b]) => b.cost - a.cost || b.requests - a.requests,
  );
  const overflow = ranked.length > MAX_SERIES_LINES;
  const shown = ranked.slice(0, overflow ? MAX_SERIES_LINES - 1 : MAX_SERIES_LINES);
  const lines = new Map<string | null, UsageSeriesLine>();
  const empty = (key: string | null, label: string): UsageSeriesLine => ({
    key,
    label,
    requests: new Array<number>(count).fill(0),
    failures: new Array<number>(count).fill(0),
    promptTokens: new Array<number>(count).fill(0),
    completionTokens: new Array<number>(count).fill(0),
    cost: new Array<number>(count).fill(0),
  });
  for (const [key, total] of shown) lines.set(key, empty(key, total.label));
  const other = overflow ? empty(null, 'Other') : undefined;
  for (const row of rows) {
    const line = lines.get(row.key) ?? other;
    if (!line) continue;
    const index = Math.round((row.bucket.getTime() - start) / 1000 / seconds);
    if (index < 0 || index >= count) continue;
    line.requests[index]! += Number(row.requests);
    line.failures[index]! += Number(row.failures);
    line.promptTokens[index]! += Number(row.promptTokens);
    line.completionTokens[index]! += Number(row.completionTokens);
    line.cost[index]! += Number(row.cost);
  }
  return [...lines.values(), ...(other ? [other] : [])];
}

function healthOf(
  channel: Channel & { keys: ChannelKey[] },
  snapshot: RoutingSnapshot | null,
  now: number,
): ChannelHealth {
  const routed = snapshot?.channels.find((candidate) => candidate.id === channel.id);
  const coolingUntil = new Map(
    (routed?.keys ?? [])
      .filter((key) => key.coolingUntil !== null && key.coolingUntil > now)
      .map((key) => [key.id, new Date(key.coolingUntil!)]),
  );
  const enabledKeys = channel.keys.filter((key) => key.status === ChannelStatus.enabled);
  let state: ChannelHealthState;
  if (channel.status === ChannelStatus.disabled) state = 'disabled';
  else if (channel.status === ChannelStatus.auto_disabled) state = 'auto_disabled';
  else if (enabledKeys.length === 0) state = 'no_keys';
  else if (!snapshot) state = 'unknown';
  // The router leaves an enabled channel with enabled keys out only while its breaker is open.
  else if (!routed) state = 'breaker_open';
  else if (routed.keys.every((key) => coolingUntil.has(key.id))) state = 'cooling_down';
  else state = 'routing';
  return {
    id: channel.id,
    name: channel.name,
    status: channel.status,
    state,
    statusReason: channel.statusReason,
    statusChangedAt: channel.statusChangedAt,
    keys: channel.keys.map((key) => ({
      id: key.id,
      lastFour: key.lastFour,
      status: key.status,
      statusReason: key.statusReason,
      statusChangedAt: key.statusChangedAt,
      coolingUntil: coolingUntil.get(key.id) ?? null,
    })),
  };
}
