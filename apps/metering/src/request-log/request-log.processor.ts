import {
  Inject,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { MeteringEnv } from '@switchyard/config';
import { Queues, RequestLogBatch, RequestLogEntry, RequestLogJobs } from '@switchyard/contracts';
import {
  dispatchJob,
  InjectTypedQueue,
  payloadValidator,
  type JobHandlers,
  type TypedQueue,
} from '@switchyard/messaging';
import { Counter, Registry } from '@switchyard/observability';
import { type Job } from 'bullmq';
import { RequestLogRepository } from './request-log.repository.js';

// Writes the request log's entries that edges send, and deletes those older than
// REQUEST_LOG_RETENTION_DAYS every hour (docs/operations.md, "Request log"). Apart from
// the usage queue on purpose: a log entry that cannot be stored never holds up a bill.

/** The scheduler id: every replica upserts it at each start, which changes nothing. */
export const REQUEST_LOG_RETENTION_SCHEDULE = 'request-log-retention';
const RETENTION_EVERY_MS = 3_600_000;
const KEEP_FINISHED = { removeOnComplete: 50, removeOnFail: 50 };
const REGISTER_RETRY_MS = 5_000;
const DELETE_CHUNK = 5_000;
const DAY_MS = 86_400_000;

export interface StoredEntries {
  stored: number;
  invalid: number;
}

export interface RequestLogRetention {
  cutoff: string;
  deleted: number;
}

type RequestLogResult = StoredEntries | RequestLogRetention;

@Processor(Queues.RequestLog)
export class RequestLogProcessor
  extends WorkerHost
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(RequestLogProcessor.name);
  private readonly validBatch = payloadValidator(RequestLogBatch);
  private readonly validEntry = payloadValidator(RequestLogEntry);
  private stopping = false;
  private lastError = '';
  private readonly entries: Counter<'result'>;
  private readonly deleted: Counter;
  private readonly handlers: JobHandlers<typeof Queues.RequestLog, RequestLogResult> = {
    [RequestLogJobs.Entries]: (job) => this.store(job),
    [RequestLogJobs.Retention]: () => this.applyRetention(new Date()),
  };

  constructor(
    private readonly repository: RequestLogRepository,
    @InjectTypedQueue(Queues.RequestLog)
    private readonly queue: TypedQueue<typeof Queues.RequestLog>,
    private readonly env: MeteringEnv,
    @Inject(Registry) registry: Registry,
  ) {
    super();
    this.entries = new Counter({
      name: 'metering_request_log_entries_total',
      help: 'Request log entries taken from the edges: stored, a duplicate delivery, or invalid (dropped).',
      labelNames: ['result'],
      registers: [registry],
    });
    this.deleted = new Counter({
      name: 'metering_request_log_deleted_total',
      help: 'Request log entries deleted by the retention.',
      registers: [registry],
    });
  }

  process(job: Job): Promise<RequestLogResult> {
    return dispatchJob(Queues.RequestLog, this.handlers, job);
  }

  /** A malformed entry is dropped alone; the rest of its job is stored. */
  private async store(job: Job): Promise<StoredEntries> {
    const { entries } = this.validBatch(job.data);
    const valid: RequestLogEntry[] = [];
    for (const entry of entries) {
      try {
        valid.push(this.validEntry(entry));
      } catch (error) {
        this.logger.warn({
          message: 'invalid request log entry dropped',
          reason: (error as Error).message,
        });
      }
    }
    const stored = valid.length > 0 ? await this.repository.insert(valid) : 0;
    const invalid = entries.length - valid.length;
    this.entries.inc({ result: 'stored' }, stored);
    this.entries.inc({ result: 'duplicate' }, valid.length - stored);
    this.entries.inc({ result: 'invalid' }, invalid);
    return { stored, invalid };
  }

  async applyRetention(now: Date): Promise<RequestLogRetention> {
    const cutoff = new Date(now.getTime() - this.env.REQUEST_LOG_RETENTION_DAYS * DAY_MS);
    const deleted = await this.repository.deleteBefore(cutoff, DELETE_CHUNK);
    this.deleted.inc(deleted);
    if (deleted > 0) {
      this.logger.log({
        message: 'old request log entries deleted',
        cutoff: cutoff.toISOString(),
        deleted,
      });
    }
    return { cutoff: cutoff.toISOString(), deleted };
  }

  onApplicationBootstrap(): void {
    this.queue.on('error', (error: Error) => this.onWorkerError(error));
    void this.registerSchedule();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.worker.close();
  }

  private async registerSchedule(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.queue.upsertJobScheduler(
          REQUEST_LOG_RETENTION_SCHEDULE,
          { every: RETENTION_EVERY_MS },
          { name: RequestLogJobs.Retention, opts: KEEP_FINISHED },
        );
        return;
      } catch (error) {
        this.logger.warn({
          message: 'could not register the request log retention; retrying',
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
    this.logger.warn({ message: 'request log queue problem', reason: error.message });
  }

  @OnWorkerEvent('failed')
  onJobFailed(job: Job | undefined, error: Error): void {
    this.logger.error({ message: 'request log job failed', job: job?.name, reason: error.message });
  }
}
