import {
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { MeteringEnv } from '@switchyard/config';
import { Queues } from '@switchyard/contracts';
import { UnrecoverableError, type Job, type Queue } from 'bullmq';
import {
  MaintenanceService,
  type RetentionResult,
  type RollUpResult,
} from './maintenance.service.js';

/** The jobs of the `usage-maintenance` queue; metering both schedules and runs them. */
export const MaintenanceJobs = {
  RollUp: 'roll-up',
  Retention: 'retention',
} as const;

/** Scheduler ids: upserting them again (every replica does, at each start) changes nothing. */
export const MAINTENANCE_SCHEDULES = {
  rollUp: 'usage-roll-up',
  retention: 'usage-retention',
} as const;

/** Daily, at a quiet hour. */
const RETENTION_PATTERN = '30 3 * * *';
const KEEP_FINISHED = { removeOnComplete: 50, removeOnFail: 50 };
const REGISTER_RETRY_MS = 5_000;

@Processor(Queues.UsageMaintenance)
export class MaintenanceProcessor
  extends WorkerHost
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(MaintenanceProcessor.name);
  private stopping = false;
  private lastError = '';

  constructor(
    private readonly maintenance: MaintenanceService,
    @InjectQueue(Queues.UsageMaintenance) private readonly queue: Queue,
    private readonly env: MeteringEnv,
  ) {
    super();
  }

  async process(job: Job): Promise<RollUpResult | RetentionResult> {
    switch (job.name) {
      case MaintenanceJobs.RollUp:
        return this.maintenance.rollUpRecent(new Date());
      case MaintenanceJobs.Retention:
        return this.maintenance.applyRetention(new Date());
      default:
        throw new UnrecoverableError(`unknown maintenance job ${job.name}`);
    }
  }

  onApplicationBootstrap(): void {
    this.queue.on('error', (error: Error) => this.onWorkerError(error));
    void this.registerSchedules();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.worker.close();
  }

  /** Idempotent: several replicas register the same two schedulers. */
  async registerSchedules(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.queue.upsertJobScheduler(
          MAINTENANCE_SCHEDULES.rollUp,
          { every: this.env.USAGE_ROLLUP_INTERVAL_MS },
          { name: MaintenanceJobs.RollUp, opts: KEEP_FINISHED },
        );
        await this.queue.upsertJobScheduler(
          MAINTENANCE_SCHEDULES.retention,
          { pattern: RETENTION_PATTERN, tz: 'UTC' },
          { name: MaintenanceJobs.Retention, opts: KEEP_FINISHED },
        );
        return;
      } catch (error) {
        this.logger.warn({
          message: 'could not register the maintenance schedules; retrying',
          reason: error instanceof Error ? error.message : String(error),
        });
        await new Promise((resolve) => setTimeout(resolve, REGISTER_RETRY_MS).unref());
      }
    }
  }

  @OnWorkerEvent('error')
  onWorkerError(error: Error): void {
    if (error.message === this.lastError) return;
    this.lastError = error.message;
    this.logger.warn({ message: 'maintenance queue problem', reason: error.message });
  }

  @OnWorkerEvent('failed')
  onJobFailed(job: Job | undefined, error: Error): void {
    this.logger.error({ message: 'maintenance job failed', job: job?.name, reason: error.message });
  }
}
