import {
  Queues,
  USAGE_JOB_NAME,
  USAGE_JOB_OPTIONS,
  type QueueJobOptions,
  type UsageRecord,
} from '@switchyard/contracts';
import { Queue, type ConnectionOptions, type RedisOptions } from 'bullmq';

// The `usage` queue as every producer opens it (the edge, metering's dead-letter tool, the
// specs and benchmarks): one name, one prefix rule, one job shape. Metering consumes it
// through @nestjs/bullmq with the same name and prefix.

export interface UsageQueueOptions {
  /** Connection options, or an ioredis client the caller owns and closes. */
  connection: ConnectionOptions;
  /** BullMQ's key prefix: `QueueConnection.prefix`, the installation's namespace. */
  prefix: string;
}

export class UsageQueue extends Queue<UsageRecord> {
  constructor(options: UsageQueueOptions) {
    super(Queues.Usage, { connection: options.connection, prefix: options.prefix });
  }

  /** Opens the queue on a `QueueConnection` (its URL and prefix), with extra client options. */
  static open(
    queues: { url: string; prefix: string },
    client: Omit<RedisOptions, 'url'> = {},
  ): UsageQueue {
    return new UsageQueue({ connection: { ...client, url: queues.url }, prefix: queues.prefix });
  }

  /**
   * One job per finished request, in one round trip. The job id is the request id, so a
   * record added twice (a spool replay, a retry) is billed once. `options` is for tools and
   * specs that need other retries than the gateway's.
   */
  async addRecords(
    records: readonly UsageRecord[],
    options: Partial<QueueJobOptions> = {},
  ): Promise<void> {
    await this.addBulk(
      records.map((data) => ({
        name: USAGE_JOB_NAME,
        data,
        opts: { ...USAGE_JOB_OPTIONS, ...options, jobId: data.requestId },
      })),
    );
  }
}
