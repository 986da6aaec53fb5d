import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import {
  USAGE_BATCH_MAX_RECORDS,
  storableUsageRecord,
  type UsageRecord,
} from '@switchyard/contracts';
import { UsageQueue } from '@switchyard/messaging';
import { Counter, Registry } from '@switchyard/observability';
import { Redis } from 'ioredis';
import { UsageSpool } from './usage-spool.js';

// The usage of finished requests, for the metering worker. Records are gathered for a few
// milliseconds (or until a batch is full) and added as one job: metering's cost per job is
// then paid once per batch (docs/performance.md, "Metering"). Metering bills each request
// id once, so a replay never bills twice. When Redis cannot take a batch it is spooled to
// disk and replayed once it can.

const FLUSH_AFTER_MS = 10;
const REPLAY_EVERY_MS = 2_000;

export interface UsagePublisherOptions {
  redisUrl: string;
  queuePrefix: string;
  spoolDirectory: string;
}

@Injectable()
export class UsagePublisher implements OnApplicationShutdown {
  private readonly logger = new Logger('UsagePublisher');
  private readonly connection: Redis;
  private readonly queue: UsageQueue;
  private readonly spool: UsageSpool;
  private pending: UsageRecord[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly replayTimer: NodeJS.Timeout;
  private replaying = false;
  private readonly published: Counter<'outcome'>;

  constructor(options: UsagePublisherOptions, registry: Registry) {
    this.connection = new Redis(options.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    });
    this.connection.on('error', () => undefined);
    this.queue = new UsageQueue({ connection: this.connection, prefix: options.queuePrefix });
    this.queue.on('error', () => undefined);
    this.spool = new UsageSpool(options.spoolDirectory);
    this.published = new Counter({
      name: 'edge_usage_records_total',
      help: 'Usage records handed to the queue, or spooled to disk while Redis was unreachable.',
      labelNames: ['outcome'],
      registers: [registry],
    });
    this.replayTimer = setInterval(() => void this.replaySpool(), REPLAY_EVERY_MS);
    this.replayTimer.unref();
  }

  record(usage: UsageRecord): void {
    // Made storable here, before the queue: a NUL or a lone surrogate from a client or an
    // upstream would otherwise fail the record's insert on every attempt.
    this.pending.push(storableUsageRecord(usage));
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
        `Redis refused ${batch.length} usage record(s) (${(error as Error).message}); spooled to disk`,
      );
    }
  }

  private async enqueue(batch: UsageRecord[]): Promise<void> {
    await this.queue.addBatch(batch);
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
