import { Injectable, Logger } from '@nestjs/common';
import { MeteringEnv } from '@switchyard/config';
import { MaintenanceRepository } from './maintenance.repository.js';
import { addDays, isoDay, startOfUtcDay } from './utc-days.js';

export interface RollUpResult {
  /** UTC days recomputed, `YYYY-MM-DD`. */
  from: string;
  to: string;
  upserted: number;
  removed: number;
}

export interface RetentionResult {
  /** Logs requested before this instant were deleted (midnight UTC). */
  cutoff: string;
  deleted: number;
  rolledUp: RollUpResult | null;
}

const DELETE_CHUNK = 10_000;

@Injectable()
export class MaintenanceService {
  private readonly logger = new Logger(MaintenanceService.name);

  constructor(
    private readonly repository: MaintenanceRepository,
    private readonly env: MeteringEnv,
  ) {}

  /** Yesterday and today (UTC): late usage of yesterday still lands in its roll-up. */
  async rollUpRecent(now: Date): Promise<RollUpResult> {
    const today = startOfUtcDay(now);
    return this.rollUp(addDays(today, -1), addDays(today, 1));
  }

  /**
   * Deletes raw logs older than USAGE_RETENTION_DAYS, by whole UTC days (a day is never
   * half deleted, and yesterday, which roll-ups still recompute, never at all). The days
   * about to go are rolled up first, so their totals survive their logs.
   */
  async applyRetention(now: Date): Promise<RetentionResult> {
    const cutoff = startOfUtcDay(addDays(now, -this.env.USAGE_RETENTION_DAYS));
    const oldest = await this.repository.oldestLogBefore(cutoff);
    if (oldest === null) return { cutoff: cutoff.toISOString(), deleted: 0, rolledUp: null };
    const rolledUp = await this.rollUp(startOfUtcDay(oldest), cutoff);
    const deleted = await this.repository.deleteLogsBefore(cutoff, DELETE_CHUNK);
    this.logger.log({ message: 'old usage logs deleted', cutoff: cutoff.toISOString(), deleted });
    return { cutoff: cutoff.toISOString(), deleted, rolledUp };
  }

  private async rollUp(from: Date, to: Date): Promise<RollUpResult> {
    const counts = await this.repository.rollUp(from, to);
    return { from: isoDay(from), to: isoDay(addDays(to, -1)), ...counts };
  }
}
