import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import {
  Queues,
  USAGE_BATCH_MAX_RECORDS,
  storableUsageRecord,
  type UsageRecord,
} from '@switchyard/contracts';
import {
  ReplicatedWrites,
  UsageQueue,
  type AnyRedis,
  type QueueConnection,
} from '@switchyard/messaging';
import { Counter, Registry, recordFinishedSpan, tracingActive } from '@switchyard/observability';
import { RequestMetrics } from './request-metrics.js';
import { UsageSpool } from './usage-spool.js';

// The usage of finished requests, for the metering worker. Records are gathered for 50 ms
// (or until a batch is full) and added as one job: BullMQ's cost per job, in the edge, in
// Redis and in the worker, is then paid once per batch (docs/performance.md, "Usage
// batches of 50 ms"). The price: an edge killed without warning loses the records of its
// last 50 ms of answers (docs/reliability.md, "Limits of what is shown"). Metering bills
// each request id once, so a replay never bills twice. A batch counts as queued once a
// replica of the queue's master has it too (when the master has one), since a master that
// dies before its replica has a batch takes the batch with it. When Redis cannot take a
// batch, or no replica acknowledges it in time, it is spooled to disk and replayed once
// Redis can.

const FLUSH_AFTER_MS = 50;
const REPLAY_EVERY_MS = 2_000;
/** A replica acknowledges in a round trip; one that takes longer is behind or stuck. */
const REPLICA_ACK_TIMEOUT_MS = 500;

export interface UsagePublisherOptions {
  /** Where the queue lives: one server, Sentinel's master or a cluster, and its prefix. */
  queues: Pick<QueueConnection, 'createClient' | 'prefix'>;
  spoolDirectory: string;
}

@Injectable()
export class UsagePublisher implements OnApplicationShutdown {
  private readonly logger = new Logger('UsagePublisher');
  private readonly connection: AnyRedis;
  private readonly queue: UsageQueue;
  private readonly replicated: ReplicatedWrites;
  private readonly spool: UsageSpool;
  private pending: UsageRecord[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly replayTimer: NodeJS.Timeout;
  private replaying = false;
  private readonly published: Counter<'outcome'>;

  constructor(
    options: UsagePublisherOptions,
    registry: Registry,
    private readonly metrics: RequestMetrics,
  ) {
    this.connection = options.queues.createClient({
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    });
    this.connection.on('error', () => undefined);
    this.queue = new UsageQueue({ connection: this.connection, prefix: options.queues.prefix });
    this.queue.on('error', () => undefined);
    this.replicated = new ReplicatedWrites(
      this.connection,
      `${options.queues.prefix}:${Queues.Usage}`,
      REPLICA_ACK_TIMEOUT_MS,
    );
    this.spool = new UsageSpool(options.spoolDirectory);
    this.published = new Counter({
      name: 'edge_usage_records_total',
      help: 'Usage records handed to the queue, or spooled to disk while Redis could not keep them.',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.replayTimer = setInterval(() => void this.replaySpool(), REPLAY_EVERY_MS);
    this.replayTimer.unref();
  }

  /** Every finished request passes here once: for metering, and for the request metrics. */
  record(usage: UsageRecord): void {
    this.metrics.observe(usage);
    // Made storable here, before the queue: a NUL or a lone surrogate from a client or an
    // upstream would otherwise fail the record's insert on every attempt.
    const storable = storableUsageRecord(usage);
    if (tracingActive()) traceRequest(storable);
    this.pending.push(storable);
    if (this.pending.length >= USAGE_BATCH_MAX_RECORDS) void this.flush();
    else this.flushTimer ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
  }

  async flush(): Promise<void> {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    try {
      await this.enqueue(batch);
      this.published.inc({ outcome: 'queued' }, batch.length);
    } catch (error) {
      await this.spool.append(batch);
      this.published.inc({ outcome: 'spooled' }, batch.length);
      this.logger.warn(
        `Redis did not keep ${batch.length} usage record(s) (${(error as Error).message}); spooled to disk`,
      );
    }
  }

  private async enqueue(batch: UsageRecord[]): Promise<void> {
    await this.replicated.write(() => this.queue.addBatch(batch));
  }

  private async replaySpool(): Promise<void> {
    if (this.replaying || this.connection.status !== 'ready') return;
    this.replaying = true;
    try {
      const files = await this.spool.drain((records) => this.enqueue(records));
      if (files > 0) this.logger.log(`replayed ${files} spool file(s) of usage records`);
    } catch (error) {
      this.logger.warn(`spool replay paused: ${(error as Error).message}`);
    } finally {
      this.replaying = false;
    }
  }

  /** After the HTTP server has drained: nothing recorded may be left in memory. */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.replayTimer);
    await this.flush();
    await this.queue.close().catch(() => undefined);
    this.connection.disconnect();
  }
}

/**
 * What the gateway decided and measured, as a span of the request's trace from its arrival
 * to now (the HTTP server span has ended by the time a stream's usage is known): ids, never
 * a key or a token string, and no prompt. The record carries the span's context on to
 * metering (docs/operations.md, "Traces").
 */
function traceRequest(record: UsageRecord): void {
  const traceparent = recordFinishedSpan(`gateway ${record.endpoint}`, record.requestedAt, {
    'gen_ai.request.model': record.model,
    ...(record.upstreamModel ? { 'gen_ai.response.model': record.upstreamModel } : {}),
    'switchyard.request.id': record.requestId,
    'switchyard.token.id': record.tokenId,
    ...(record.channelId !== null ? { 'switchyard.channel.id': record.channelId } : {}),
    ...(record.keyId !== null ? { 'switchyard.key.id': record.keyId } : {}),
    'switchyard.attempts': record.attempts,
    'switchyard.failovers': Math.max(0, record.attempts - 1),
    'switchyard.stream': record.stream,
    'http.response.status_code': record.status,
    ...(record.errorCode ? { 'switchyard.error.code': record.errorCode } : {}),
    ...(record.firstByteMs !== null ? { 'switchyard.first_byte_ms': record.firstByteMs } : {}),
    ...(record.usage
      ? {
          'gen_ai.usage.input_tokens': record.usage.promptTokens,
          'gen_ai.usage.output_tokens': record.usage.completionTokens,
        }
      : {}),
  });
  if (traceparent) record.traceparent = traceparent;
}
