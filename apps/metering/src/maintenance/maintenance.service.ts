import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { MeteringEnv } from '@switchyard/config';
import { MaintenanceRepository } from './maintenance.repository.js';
import { addDays, isoDay, startOfUtcDay, startOfUtcMonth } from './utc-days.js';

export interface RollUpResult {
  /** UTC days recomputed, `YYYY-MM-DD`. */
  from: string;
  to: string;
  upserted: number;
  removed: number;
}

export interface DroppedPartition {
  name: string;
  /** Its days' roll-ups, recomputed from its rows just before it was dropped. */
  rolledUp: RollUpResult;
}

export interface RetentionResult {
  /**
   * Month partitions ending at or before this instant (midnight UTC, USAGE_LOG_RETENTION_DAYS
   * ago) are dropped; null when logs are kept for ever.
   */
  cutoff: string | null;
  /**
   * Logs that arrived for months retention had already dropped: added to those days'
   * roll-ups (which a recomputation would have replaced with them alone), then deleted.
   */
  strays: number;
  /** Whole month partitions dropped, every row of them older than the cutoff, oldest first. */
  partitionsDropped: DroppedPartition[];
}

/** Month partitions kept ready beyond the current one (docs/scaling.md, "Usage partitions"). */
export const PARTITION_MONTHS_AHEAD = 2;

@Injectable()
export class MaintenanceService implements OnModuleInit {
  private readonly logger = new Logger(MaintenanceService.name);
  /** Days raw logs are kept; undefined: for ever (docs/scaling.md, "Usage partitions"). */
  private readonly retentionDays: number | undefined;

  constructor(
    private readonly repository: MaintenanceRepository,
    private readonly env: MeteringEnv,
  ) {
    this.retentionDays = env.USAGE_LOG_RETENTION_DAYS ?? env.USAGE_RETENTION_DAYS;
  }

  onModuleInit(): void {
    if (this.env.USAGE_RETENTION_DAYS === undefined) return;
    this.logger.warn({
      message:
        'USAGE_RETENTION_DAYS is deprecated: set USAGE_LOG_RETENTION_DAYS, which drops whole month partitions',
      used: this.env.USAGE_LOG_RETENTION_DAYS === undefined,
    });
  }

  /** Yesterday and today (UTC): late usage of yesterday still lands in its roll-up. */
  async rollUpRecent(now: Date): Promise<RollUpResult> {
    const today = startOfUtcDay(now);
    return this.rollUp(addDays(today, -1), addDays(today, 1));
  }

  /**
   * Creates the UsageLog partitions of the month of `now` and the PARTITION_MONTHS_AHEAD
   * after it that do not exist yet; returns the names created. Run daily, so a month's
   * partition exists weeks before its first row.
   */
  async preparePartitions(now: Date): Promise<string[]> {
    const created: string[] = [];
    for (let ahead = 0; ahead <= PARTITION_MONTHS_AHEAD; ahead++) {
      const month = startOfUtcMonth(now, ahead);
      if (await this.repository.ensureMonthPartition(month)) created.push(isoDay(month));
    }
    if (created.length > 0) this.logger.log({ message: 'usage partitions created', created });
    return created;
  }

  /**
   * Drops the month partitions of UsageLog whose every row is older than
   * USAGE_LOG_RETENTION_DAYS (by whole UTC days), each after rolling its days up into
   * UsageDaily in the same transaction, so their totals survive their logs; with no
   * retention set, nothing is dropped. A log that arrives for a month already dropped (a
   * spool replayed late) lands in the default partition and is added to its day's roll-up
   * here: recomputing the day from that log alone would lose the rest.
   */
  async applyRetention(now: Date): Promise<RetentionResult> {
    const compacted = await this.repository.compactedBefore();
    const strays = compacted ? await this.repository.addStraysBefore(compacted) : 0;
    const cutoff =
      this.retentionDays === undefined ? null : startOfUtcDay(addDays(now, -this.retentionDays));
    const partitionsDropped: DroppedPartition[] = [];
    let compactedBefore = compacted;
    for (const partition of cutoff ? await this.repository.monthPartitionsEndingBy(cutoff) : []) {
      const { from, ...counts } = await this.repository.rollUpAndDrop(partition, compactedBefore);
      partitionsDropped.push({
        name: partition.name,
        rolledUp: { from: isoDay(from), to: isoDay(addDays(partition.until, -1)), ...counts },
      });
      if (!compactedBefore || compactedBefore < partition.until) compactedBefore = partition.until;
    }
    this.logger.log({
      message: 'usage log retention',
      cutoff: cutoff?.toISOString() ?? null,
      strays,
      partitionsDropped: partitionsDropped.map((p) => p.name),
    });
    return { cutoff: cutoff?.toISOString() ?? null, strays, partitionsDropped };
  }

  private async rollUp(from: Date, to: Date): Promise<RollUpResult> {
    const counts = await this.repository.rollUp(from, to);
    return { from: isoDay(from), to: isoDay(addDays(to, -1)), ...counts };
  }
}
