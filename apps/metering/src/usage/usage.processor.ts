import {
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { MeteringEnv } from '@switchyard/config';
import { Queues, UsageRecord } from '@switchyard/contracts';
import { InvalidPayloadError, validatePayload } from '@switchyard/messaging';
import { UnrecoverableError, Worker, type Job, type Queue } from 'bullmq';
import { PriceBook } from '../pricing/price-book.js';
import { StoreUnavailableError } from './micro-batcher.js';
import { InvalidUsageError, UsageEntryFactory, type UsageEntry } from './usage-entry.js';
import { UsageSettlement } from './usage-settlement.service.js';
import { UsageMetrics } from './usage.metrics.js';

/**
 * Consumes the `usage` queue. Many jobs are active at once; each hands its record to the
 * batcher and completes when the batch holding it commits. An invalid record fails at
 * once (no retry) and stays in the failed set: the dead-letter list.
 */
@Processor(Queues.Usage, {
  autorun: false,
  // A worker that dies (SIGKILL, out of memory) leaves its jobs locked until the lock
  // expires and another worker's stalled-job check finds them: BullMQ's 30 s and 30 s kept a
  // dead worker's usage unbilled for up to a minute (docs/reliability.md). The lock is
  // renewed every 5 s by a live worker, so 10 s is still far from a false stall.
  lockDuration: 10_000,
  stalledInterval: 5_000,
})
export class UsageProcessor
  extends WorkerHost
  implements OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly logger = new Logger(UsageProcessor.name);
  private stopping = false;
  private lastWorkerError = '';

  constructor(
    private readonly entries: UsageEntryFactory,
    private readonly settlement: UsageSettlement,
    private readonly prices: PriceBook,
    private readonly metrics: UsageMetrics,
    private readonly env: MeteringEnv,
    @InjectQueue(Queues.Usage) private readonly queue: Queue,
  ) {
    super();
  }

  async process(job: Job): Promise<void> {
    let entry: UsageEntry;
    try {
      const record = validatePayload(UsageRecord, job.data);
      const tokens = this.entries.tokenUsage(record);
      entry = this.entries.create(record, tokens instanceof Promise ? await tokens : tokens);
    } catch (error) {
      if (error instanceof InvalidPayloadError || error instanceof InvalidUsageError) {
        this.metrics.countFailure('invalid');
        this.logger.warn({
          message: 'invalid usage record sent to the dead-letter list',
          jobId: job.id,
          reason: error.message,
        });
        throw new UnrecoverableError(`invalid usage record: ${error.message}`);
      }
      throw error;
    }
    try {
      this.metrics.countSettled(await this.settlement.settle(entry));
    } catch (error) {
      if (error instanceof StoreUnavailableError) {
        // Shutting down while Postgres is away: back to the head of the queue, no attempt spent.
        throw Worker.RateLimitError();
      }
      this.metrics.countFailure('error');
      throw error;
    }
  }

  onApplicationBootstrap(): void {
    this.queue.on('error', (error: Error) => this.onWorkerError(error));
    this.worker.concurrency = this.env.USAGE_CONCURRENCY;
    void this.start();
  }

  /** Jobs are taken only once prices are known, so none is billed at a price not yet read. */
  private async start(): Promise<void> {
    await this.prices.loaded;
    if (this.stopping) return;
    this.worker.run().catch((error: unknown) => {
      this.logger.error({ message: 'the usage worker stopped', err: error });
    });
  }

  /** Before Prisma and Redis close: active jobs finish (their batches commit), then the worker closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.settlement.stop();
    await this.worker.close();
  }

  @OnWorkerEvent('error')
  onWorkerError(error: Error): void {
    // Reconnection is automatic; say so once per distinct problem, not at every retry.
    if (error.message === this.lastWorkerError) return;
    this.lastWorkerError = error.message;
    this.logger.warn({ message: 'usage worker problem', reason: error.message });
  }

  @OnWorkerEvent('failed')
  onJobFailed(job: Job | undefined, error: Error): void {
    if (!job || job.attemptsMade < (job.opts.attempts ?? 1)) return;
    if (error instanceof UnrecoverableError || error.name === 'UnrecoverableError') return;
    this.logger.error({
      message: 'usage job failed every attempt; it waits in the dead-letter list',
      jobId: job.id,
      attempts: job.attemptsMade,
      reason: error.message,
    });
  }
}
