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

  async find(requestId: string): Promise<UsageRecord | undefined> {
    const job = await this.queue.getJob(requestId);
    return job?.data;
  }

  async close(): Promise<void> {
    await this.queue.close();
    this.connection.disconnect();
  }
}
