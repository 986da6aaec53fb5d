import { inNamespace, UsageQueue } from '@switchyard/messaging';
import { type UsageRecord } from '@switchyard/contracts';
import { Redis } from 'ioredis';

/** Reads the usage jobs the edges queued for metering (no worker consumes them in these tests). */
export class UsageJobs {
  private readonly connection: Redis;
  private readonly queue: UsageQueue;

  constructor(redisUrl: string, prefix: string) {
    this.connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    this.queue = new UsageQueue({
      connection: this.connection,
      prefix: inNamespace(prefix, 'bull'),
    });
  }

  /** Every record queued (the edge queues them in batches), oldest job first. */
  async records(): Promise<UsageRecord[]> {
    const jobs = await this.queue.getJobs(
      ['waiting', 'prioritized', 'delayed', 'active', 'completed'],
      0,
      -1,
      true,
    );
    return jobs.flatMap((job) => UsageQueue.recordsOf(job));
  }

  async find(requestId: string): Promise<UsageRecord | undefined> {
    return (await this.records()).find((record) => record.requestId === requestId);
  }

  async close(): Promise<void> {
    await this.queue.close();
    this.connection.disconnect();
  }
}
