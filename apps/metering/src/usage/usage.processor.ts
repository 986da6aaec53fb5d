import {
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { MeteringEnv } from '@switchyard/config';
import {
  Queues,
  USAGE_BATCH_JOB_NAME,
  USAGE_JOB_NAME,
  UsageBatch,
  type QueueJobOptions,
} from '@switchyard/contracts';
import {
  dispatchJob,
  InjectTypedQueue,
  InvalidPayloadError,
  payloadValidator,
  QueueConnection,
  UsageQueue,
  type JobHandlers,
  type SingleRecordJob,
  type TypedQueue,
} from '@switchyard/messaging';
import {
  inLinkedSpan,
  linkTo,
  setActiveSpanAttributes,
  tracingActive,
} from '@switchyard/observability';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { PriceBook } from '../pricing/price-book.js';
import { StoreUnavailableError } from './micro-batcher.js';
import { InvalidUsageError, UsageEntryFactory, type UsageEntry } from './usage-entry.js';
import { UsageSettlement } from './usage-settlement.service.js';
import { UsageMetrics } from './usage.metrics.js';

/** A request id that BullMQ takes as a job id, and that no batch id can be. */
const REQUEST_ID_AS_JOB_ID = /^(?!batch-)(?!\d+$)[A-Za-z0-9._-]{1,64}$/;

/**
 * Consumes the `usage` queue. A few jobs are active at once; each hands its records to the
 * batcher and completes when the batches holding them commit.
 *
 * A batch job (what edges send) is validated record by record: a record that is malformed,
 * or that the database refuses, is set aside as a job of its own (its request id as job
 * id) and the rest of the batch is billed. A job of one record (what edges before batches
 * sent, and a set-aside record) that is invalid fails at once (no retry) and stays in the
 * failed set: the dead-letter list. Every record is billed once by its request id, so a
 * redelivered batch bills nothing twice.
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
  private readonly validBatch = payloadValidator(UsageBatch);
  /** Where records set aside from their batch go: the same queue, as jobs of one record. */
  private readonly setAsideQueue: UsageQueue;
  private stopping = false;
  private lastWorkerError = '';
  private readonly handlers: JobHandlers<typeof Queues.Usage, void> = {
    [USAGE_JOB_NAME]: (job) => this.processRecord(job),
    [USAGE_BATCH_JOB_NAME]: (job) => this.processBatch(job),
  };

  constructor(
    private readonly entries: UsageEntryFactory,
    private readonly settlement: UsageSettlement,
    private readonly prices: PriceBook,
    private readonly metrics: UsageMetrics,
    private readonly env: MeteringEnv,
    @InjectTypedQueue(Queues.Usage) private readonly queue: TypedQueue<typeof Queues.Usage>,
    queues: QueueConnection,
  ) {
    super();
    this.setAsideQueue = UsageQueue.open(queues);
    this.setAsideQueue.on('error', (error: Error) => this.onWorkerError(error));
  }

  // Data as stored: each handler validates its own.
  async process(job: Job<unknown>): Promise<void> {
    if (!tracingActive()) return this.processJob(job);
    // One job settles many requests: its span is a root of its own, linked to the span of
    // each request it bills (docs/operations.md, "Traces").
    const records = UsageQueue.recordsOf(job) as unknown[];
    const links = records.flatMap((record) => {
      const { traceparent, requestId } = (record ?? {}) as Record<string, unknown>;
      const link = linkTo(typeof traceparent === 'string' ? traceparent : undefined);
      if (!link) return [];
      return typeof requestId === 'string'
        ? [{ ...link, attributes: { 'switchyard.request.id': requestId } }]
        : [link];
    });
    return inLinkedSpan(
      'usage settle',
      links,
      {
        'messaging.system': 'bullmq',
        'messaging.destination.name': Queues.Usage,
        'messaging.message.id': job.id ?? '',
        'messaging.batch.message_count': records.length,
      },
      () => this.processJob(job),
    );
  }

  private processJob(job: Job): Promise<void> {
    return dispatchJob(Queues.Usage, this.handlers, job);
  }

  private async processRecord(job: Job): Promise<void> {
    let entry: UsageEntry;
    try {
      const prepared = this.entries.fromPayload(job.data);
      entry = prepared instanceof Promise ? await prepared : prepared;
    } catch (error) {
      if (isInvalid(error)) this.deadLetter(job, error);
      throw error;
    }
    if (tracingActive()) setActiveSpanAttributes(batchAttributes([{ entry }]));
    try {
      this.metrics.countSettled(await this.settlement.settle(entry));
    } catch (error) {
      throw this.settlementFailure(error);
    }
  }

  private async processBatch(job: Job): Promise<void> {
    let records: unknown[];
    try {
      records = this.validBatch(job.data).records;
    } catch (error) {
      if (isInvalid(error)) this.deadLetter(job, error);
      throw error;
    }
    const setAside: (SingleRecordJob & { reason: string })[] = [];
    const setAsideFor = (index: number, error: unknown) =>
      setAside.push({
        jobId: setAsideJobId(job, index, records[index]),
        data: records[index],
        reason: error instanceof Error ? error.message : String(error),
      });

    const entries: { index: number; entry: UsageEntry }[] = [];
    for (let index = 0; index < records.length; index += 1) {
      try {
        const prepared = this.entries.fromPayload(records[index]);
        entries.push({ index, entry: prepared instanceof Promise ? await prepared : prepared });
      } catch (error) {
        if (!isInvalid(error)) throw error;
        setAsideFor(index, error);
      }
    }

    if (tracingActive()) setActiveSpanAttributes(batchAttributes(entries));
    const outcomes = await Promise.allSettled(
      this.settlement.settleAll(entries.map(({ entry }) => entry)),
    );
    let unavailable: unknown;
    outcomes.forEach((outcome, position) => {
      if (outcome.status === 'fulfilled') return;
      if (outcome.reason instanceof StoreUnavailableError) unavailable = outcome.reason;
      else setAsideFor(entries[position]!.index, outcome.reason);
    });
    // The records billed now are duplicates when the job comes back: billed once.
    if (unavailable !== undefined) throw this.settlementFailure(unavailable);

    if (setAside.length > 0) {
      await this.setAsideQueue.addSingleRecords(setAside, retriesOf(job));
      for (const { jobId, reason } of setAside) {
        this.logger.warn({
          message: 'usage record set aside from its batch, to be retried or dead-lettered alone',
          batchJobId: job.id,
          jobId,
          reason,
        });
      }
    }
    for (const outcome of outcomes) {
      if (outcome.status === 'fulfilled') this.metrics.countSettled(outcome.value);
    }
  }

  private deadLetter(job: Job, error: Error): never {
    this.metrics.countFailure('invalid');
    this.logger.warn({
      message: 'invalid usage job sent to the dead-letter list',
      jobId: job.id,
      reason: error.message,
    });
    throw new UnrecoverableError(`invalid usage record: ${error.message}`);
  }

  private settlementFailure(error: unknown): unknown {
    if (error instanceof StoreUnavailableError) {
      // Shutting down while Postgres is away: back to the head of the queue, no attempt spent.
      return Worker.RateLimitError();
    }
    this.metrics.countFailure('error');
    return error;
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
    await this.setAsideQueue.close();
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

function isInvalid(error: unknown): error is InvalidPayloadError | InvalidUsageError {
  return error instanceof InvalidPayloadError || error instanceof InvalidUsageError;
}

/** The record's request id when it can be one (an operator finds it by that), else its place. */
function setAsideJobId(batch: Job, index: number, record: unknown): string {
  const requestId = (record as { requestId?: unknown } | null)?.requestId;
  return typeof requestId === 'string' && REQUEST_ID_AS_JOB_ID.test(requestId)
    ? requestId
    : `${batch.id}-${index}`;
}

/** A batch's retries, for what it sets aside: a tool's shorter ones hold for those too. */
function retriesOf(batch: Job): Partial<QueueJobOptions> {
  const { attempts, backoff } = batch.opts;
  return {
    ...(attempts === undefined ? {} : { attempts }),
    ...(typeof backoff === 'object' ? { backoff: backoff as QueueJobOptions['backoff'] } : {}),
  };
}

/** What a settlement span tells of its batch: tokens and cost, summed. */
function batchAttributes(entries: readonly { entry: UsageEntry }[]): Record<string, number> {
  let input = 0;
  let output = 0;
  let cost = 0n;
  for (const { entry } of entries) {
    input += entry.promptTokens;
    output += entry.completionTokens;
    cost += entry.cost;
  }
  return {
    'gen_ai.usage.input_tokens': input,
    'gen_ai.usage.output_tokens': output,
    'switchyard.cost_microdollars': Number(cost),
  };
}
