import {
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { MeteringEnv } from '@switchyard/config';
import { MaintenanceJobs, Queues } from '@switchyard/contracts';
import {
  dispatchJob,
  InjectTypedQueue,
  type JobHandlers,
  type TypedQueue,
} from '@switchyard/messaging';
import { type Job } from 'bullmq';
import {
  MaintenanceService,
  type RetentionResult,
  type RollUpResult,
} from './maintenance.service.js';

/** Scheduler ids: upserting them again (every replica does, at each start) changes nothing. */
export const MAINTENANCE_SCHEDULES = {
  rollUp: 'usage-roll-up',
  retention: 'usage-retention',
} as const;

/** Daily, at a quiet hour. */
const RETENTION_PATTERN = '30 3 * * *';
const KEEP_FINISHED = { removeOnComplete: 50, removeOnFail: 50 };
const REGISTER_RETRY_MS = 5_000;

type MaintenanceResult = RollUpResult | RetentionResult;

@Processor(Queues.UsageMaintenance)
export class MaintenanceProcessor
  extends WorkerHost
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(MaintenanceProcessor.name);
  private stopping = false;
  private lastError = '';
  private readonly handlers: JobHandlers<typeof Queues.UsageMaintenance, MaintenanceResult> = {
    [MaintenanceJobs.RollUp]: () => this.maintenance.rollUpRecent(new Date()),
    // Partitions ahead first: a failure to drop old ones never leaves next month without one.
    [MaintenanceJobs.Retention]: async () => {
      const now = new Date();
      await this.maintenance.preparePartitions(now);
      return this.maintenance.applyRetention(now);
    },
  };

  constructor(
    private readonly maintenance: MaintenanceService,
    @InjectTypedQueue(Queues.UsageMaintenance)
    private readonly queue: TypedQueue<typeof Queues.UsageMaintenance>,
    private readonly env: MeteringEnv,
  ) {
    super();
  }

  process(job: Job): Promise<MaintenanceResult> {
    return dispatchJob(Queues.UsageMaintenance, this.handlers, job);
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
