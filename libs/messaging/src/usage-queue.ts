import { hash } from 'node:crypto';
import {
  Queues,
  USAGE_BATCH_JOB_NAME,
  USAGE_BATCH_MAX_RECORDS,
  USAGE_JOB_NAME,
  USAGE_JOB_OPTIONS,
  type JobName,
  type QueueJobOptions,
  type UsageBatch,
  type UsageRecord,
} from '@switchyard/contracts';
import { Queue, type ConnectionOptions, type Job, type RedisOptions } from 'bullmq';
import { Cluster } from 'ioredis';
import { QueueConnection } from './messaging.module.js';
import { type QueuedJob } from './typed-queue.js';

// The `usage` queue as every producer opens it (the edge, metering's dead-letter tool and
// its set-aside records, the specs and benchmarks): one name, one prefix rule, one job
// shape. Metering consumes it through @nestjs/bullmq with the same name and prefix.

export interface UsageQueueOptions {
  /** Connection options, or an ioredis client the caller owns and closes. */
  connection: ConnectionOptions;
  /** BullMQ's key prefix: `QueueConnection.prefix`, the installation's namespace. */
  prefix: string;
}

/** A job of one record: its id and its data, which may be anything a batch held. */
export interface SingleRecordJob {
  jobId: string;
  data: unknown;
}

const BATCH_ID = /^batch-(\d+)-[0-9a-f]{32}$/;

type UsageJob = QueuedJob<typeof Queues.Usage>;

/** The `usage` queue; its jobs are added as `QueuedJob`s, each name with its own data. */
export class UsageQueue extends Queue<
  UsageRecord | UsageBatch,
  unknown,
  JobName<typeof Queues.Usage>
> {
  constructor(options: UsageQueueOptions) {
    super(Queues.Usage, { connection: options.connection, prefix: options.prefix });
  }

  /**
   * Opens the queue on a `QueueConnection` (or a plain `{ url, prefix }`), with extra client
   * options. A cluster client made for it is the queue's own: closed with it.
   */
  static open(
    queues: QueueConnection | { url: string; prefix: string },
    client: Omit<RedisOptions, 'url'> = {},
  ): UsageQueue {
    if (!(queues instanceof QueueConnection)) {
      return new UsageQueue({ connection: { ...client, url: queues.url }, prefix: queues.prefix });
    }
    const connection = queues.connectionOptions(client);
    const queue = new UsageQueue({ connection, prefix: queues.prefix });
    if (connection instanceof Cluster) queue.owned = connection;
    return queue;
  }

  /** A connection made for this queue alone, closed with it. */
  private owned: Cluster | undefined;

  override async close(): Promise<void> {
    await super.close();
    await this.owned?.quit().catch(() => this.owned?.disconnect());
  }

  /**
   * The job id of a batch, derived from its records: the earliest request time, then a hash
   * of the request ids in order. The same batch added again (a spool replay, a publish
   * retried after Redis took it) is the same job; the time lets metering read its lag from
   * job ids alone.
   */
  static batchJobId(records: readonly UsageRecord[]): string {
    let ids = '';
    let earliest = Number.POSITIVE_INFINITY;
    for (const record of records) {
      ids += `${record.requestId}\n`;
      if (record.requestedAt < earliest) earliest = record.requestedAt;
    }
    const time = Number.isSafeInteger(earliest) && earliest >= 0 ? earliest : 0;
    return `batch-${time}-${hash('sha256', ids, 'hex').slice(0, 32)}`;
  }

  /** The earliest request time of a batch job, from its id; undefined for a job of one record. */
  static requestedAtOf(jobId: string): number | undefined {
    const time = BATCH_ID.exec(jobId)?.[1];
    return time === undefined ? undefined : Number(time);
  }

  /** The records a job holds as stored, not validated: a batch's, or the one of a job of one. */
  static recordsOf(job: Job<unknown>): UsageRecord[] {
    if (job.name !== USAGE_BATCH_JOB_NAME) return [job.data as UsageRecord];
    const { records } = job.data as Partial<UsageBatch>;
    return Array.isArray(records) ? records : [];
  }

  /**
   * Up to USAGE_BATCH_MAX_RECORDS records as one job, in one round trip: metering's work per
   * job is paid once for the batch (docs/performance.md, "Metering"). Returns the job id.
   * A record that reaches metering twice anyway is billed once: `UsageLog.requestId` is
   * unique. `options` is for tools and specs that need other retries than the gateway's.
   */
  async addBatch(
    records: readonly UsageRecord[],
    options: Partial<QueueJobOptions> = {},
  ): Promise<string> {
    if (records.length === 0 || records.length > USAGE_BATCH_MAX_RECORDS) {
      throw new RangeError(
        `a usage batch holds 1 to ${USAGE_BATCH_MAX_RECORDS} records, not ${records.length}`,
      );
    }
    const jobId = UsageQueue.batchJobId(records);
    const job: UsageJob = {
      name: USAGE_BATCH_JOB_NAME,
      data: { records: [...records] },
      opts: { ...USAGE_JOB_OPTIONS, ...options, jobId },
    };
    await this.add(job.name, job.data, job.opts);
    return jobId;
  }

  /**
   * Jobs of one record each, in one round trip: the records metering sets aside from a
   * batch (malformed, or refused by the database) so that they are retried or
   * dead-lettered alone. A job id that exists already adds nothing.
   */
  async addSingleRecords(
    jobs: readonly SingleRecordJob[],
    options: Partial<QueueJobOptions> = {},
  ): Promise<void> {
    await this.addBulk(
      jobs.map(({ jobId, data }): UsageJob => ({
        name: USAGE_JOB_NAME,
        // As the batch held it: an invalid record is queued to be dead-lettered alone.
        data: data as UsageRecord,
        opts: { ...USAGE_JOB_OPTIONS, ...options, jobId },
      })),
    );
  }
}
