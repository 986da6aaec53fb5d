import { Inject, Injectable } from '@nestjs/common';
import { Queues, type UsageRecord } from '@switchyard/contracts';
import { InjectTypedQueue, UsageQueue, type TypedQueue } from '@switchyard/messaging';
import { Counter, Gauge, Histogram, readWithin, Registry } from '@switchyard/observability';

export type SettledResult = 'billed' | 'duplicate';
export type FailureReason = 'invalid' | 'error';

interface QueueSnapshot {
  depth: number;
  deadLetters: number;
  lagSeconds: number;
}

/**
 * Jobs looked at, from the head of each of the waiting, active and delayed sets, for the
 * oldest request time: jobs arrive roughly in request order, not exactly (a long stream is
 * enqueued when it ends), and reading every job of a deep queue at each scrape is too dear.
 * A batch job's earliest request time is in its id, so only jobs of one record are read.
 */
const LAG_SAMPLE = 50;
/** A scrape waits this long for Redis, then answers with the last values read. */
const READ_TIMEOUT_MS = 2_000;

/**
 * The metering worker's Prometheus metrics. Queue depth, lag and the dead-letter count are
 * read from Redis when scraped, so every replica reports the whole queue.
 */
@Injectable()
export class UsageMetrics {
  private readonly settled: Record<SettledResult, { inc(): void }>;
  private readonly failures: Record<FailureReason, { inc(): void }>;
  readonly batchSize: Histogram;
  readonly batchSeconds: Histogram;
  readonly exhausted: Counter;
  readonly databaseReachable: Gauge;
  private readonly spend: Counter<'model'>;
  /** The read in progress: one scrape reads the queue once, however many gauges it fills. */
  private reading: Promise<QueueSnapshot> | undefined;

  constructor(
    @Inject(Registry) registry: Registry,
    @InjectTypedQueue(Queues.Usage) private readonly queue: TypedQueue<typeof Queues.Usage>,
  ) {
    const settled = new Counter({
      name: 'metering_records_settled_total',
      help: 'Usage records settled into Postgres: billed, or found already billed (a duplicate delivery).',
      labelNames: ['result'],
      registers: [registry],
    });
    // Children bound once: the hot path does not hash label sets.
    this.settled = { billed: settled.labels('billed'), duplicate: settled.labels('duplicate') };
    for (const result of ['billed', 'duplicate']) settled.inc({ result }, 0);
    const failures = new Counter({
      name: 'metering_job_failures_total',
      help: 'Usage job attempts that failed: invalid records (dead-lettered at once) or errors (retried).',
      labelNames: ['reason'],
      registers: [registry],
    });
    this.failures = { invalid: failures.labels('invalid'), error: failures.labels('error') };
    for (const reason of ['invalid', 'error']) failures.inc({ reason }, 0);
    this.batchSize = new Histogram({
      name: 'metering_batch_size',
      help: 'Usage records written per transaction.',
      buckets: [1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000],
      registers: [registry],
    });
    this.batchSeconds = new Histogram({
      name: 'metering_batch_duration_seconds',
      help: 'Time to write one batch, transaction included.',
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
    this.exhausted = new Counter({
      name: 'metering_tokens_exhausted_total',
      help: 'Limited tokens that ran out of quota.',
      registers: [registry],
    });
    this.databaseReachable = new Gauge({
      name: 'metering_database_reachable',
      help: '0 while Postgres cannot be reached and usage waits for it.',
      registers: [registry],
    });
    this.databaseReachable.set(1);
    this.spend = new Counter({
      name: 'metering_spend_microdollars_total',
      help: 'Cost billed, in micro-dollars, by requested model (priced models only).',
      labelNames: ['model'],
      registers: [registry],
    });
    const read = (pick: (s: QueueSnapshot) => number) =>
      async function (this: Gauge): Promise<void> {
        try {
          this.set(pick(await snapshot()));
        } catch {
          // Redis is away: the scrape still answers, with the last values read.
        }
      };
    const snapshot = () => this.queueSnapshot();
    new Gauge({
      name: 'metering_queue_depth',
      help: 'Usage jobs not settled yet (a job holds one to 500 records): waiting, delayed (retrying) and active.',
      registers: [registry],
      collect: read((s) => s.depth),
    });
    new Gauge({
      name: 'metering_lag_seconds',
      help: 'Now minus the request time of the oldest unsettled usage job (among the first 50 waiting, active and delayed); 0 when none.',
      registers: [registry],
      collect: read((s) => s.lagSeconds),
    });
    new Gauge({
      name: 'metering_dead_letters',
      help: 'Usage jobs that failed every attempt and wait for an operator (the failed set).',
      registers: [registry],
      collect: read((s) => s.deadLetters),
    });
  }

  countSettled(result: SettledResult): void {
    this.settled[result].inc();
  }

  countFailure(reason: FailureReason): void {
    this.failures[reason].inc();
  }

  /** Only priced models bill a cost, so the label set is bounded by the price list. */
  countSpend(model: string, microdollars: bigint): void {
    this.spend.inc({ model }, Number(microdollars));
  }

  private queueSnapshot(): Promise<QueueSnapshot> {
    this.reading ??= readWithin(this.readQueue(Date.now()), READ_TIMEOUT_MS, 'Redis').finally(
      () => (this.reading = undefined),
    );
    return this.reading;
  }

  /**
   * When the job's (earliest) request arrived: from a batch job's id, else from the record;
   * the enqueue time for a job whose data says nothing usable, nothing for one gone since.
   */
  private async requestedAt(jobId: string): Promise<number | undefined> {
    const fromId = UsageQueue.requestedAtOf(jobId);
    if (fromId !== undefined) return fromId;
    const job = await this.queue.getJob(jobId);
    if (!job) return undefined;
    const data = job.data as Partial<UsageRecord> | undefined;
    return typeof data?.requestedAt === 'number' && Number.isFinite(data.requestedAt)
      ? data.requestedAt
      : job.timestamp;
  }

  private async readQueue(now: number): Promise<QueueSnapshot> {
    const [counts, oldestWaiting, oldestActive, delayed] = await Promise.all([
      this.queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active', 'failed'),
      // Lists hold their oldest jobs at the tail: ascending order starts there.
      this.queue.getRanges(['wait'], 0, LAG_SAMPLE - 1, true),
      this.queue.getRanges(['active'], 0, LAG_SAMPLE - 1, true),
      this.queue.getRanges(['delayed'], 0, LAG_SAMPLE - 1, true),
    ]);
    const depth =
      (counts.waiting ?? 0) +
      (counts.prioritized ?? 0) +
      (counts.delayed ?? 0) +
      (counts.active ?? 0);
    const requested = await Promise.all(
      [...new Set([...oldestWaiting, ...oldestActive, ...delayed])].map((id) =>
        this.requestedAt(id),
      ),
    );
    const known = requested.filter((time): time is number => time !== undefined);
    const oldest = known.length > 0 ? Math.min(...known) : now;
    return {
      depth,
      deadLetters: counts.failed ?? 0,
      lagSeconds: depth === 0 ? 0 : Math.max(0, now - oldest) / 1000,
    };
  }
}
