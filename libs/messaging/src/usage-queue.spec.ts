import { USAGE_JOB_NAME, USAGE_JOB_OPTIONS, type UsageRecord } from '@switchyard/contracts';
import {
  clearRedisNamespace,
  linesMatching,
  sourceFiles,
  testRedisPrefix,
} from '@switchyard/testing';
import { Redis } from 'ioredis';
import { inNamespace } from './namespace.js';
import { UsageQueue } from './usage-queue.js';

// The usage queue's one producer, against the real Redis.

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

function record(requestId: string): UsageRecord {
  return {
    requestId,
    tokenId: 1,
    channelId: 2,
    keyId: 3,
    endpoint: 'chat.completions',
    model: 'gpt-4o',
    upstreamModel: null,
    stream: false,
    status: 200,
    errorCode: null,
    usage: { promptTokens: 1, completionTokens: 2 },
    latencyMs: 10,
    firstByteMs: 5,
    attempts: 1,
    clientIp: null,
    requestedAt: 1_700_000_000_000,
  };
}

describe('UsageQueue', () => {
  const namespace = testRedisPrefix();
  const prefix = inNamespace(namespace, 'bull');
  const queue = UsageQueue.open({ url, prefix });

  afterAll(async () => {
    await queue.close();
    await clearRedisNamespace(url, namespace);
  });

  it('adds one job per request, named and retried as metering expects, keyed by request id', async () => {
    await queue.addRecords([record('req-a'), record('req-b')]);
    const job = await queue.getJob('req-a');
    expect(job?.name).toBe(USAGE_JOB_NAME);
    expect(job?.data).toEqual(record('req-a'));
    expect(job?.opts).toMatchObject({
      attempts: USAGE_JOB_OPTIONS.attempts,
      backoff: USAGE_JOB_OPTIONS.backoff,
    });
    expect(await queue.getWaitingCount()).toBe(2);
  });

  it('keeps one job when the same request is added again (a spool replay bills once)', async () => {
    await queue.addRecords([record('req-c')]);
    await queue.addRecords([record('req-c'), record('req-d')]);
    expect(await queue.getWaitingCount()).toBe(4);
  });

  it('lets a tool shorten the retries of what it adds', async () => {
    await queue.addRecords([record('req-e')], { attempts: 1 });
    expect((await queue.getJob('req-e'))?.opts.attempts).toBe(1);
  });

  it("stores under the installation's namespace only", async () => {
    const redis = new Redis(url);
    try {
      const keys = await redis.keys(`${prefix}:usage:*`);
      expect(keys.length).toBeGreaterThan(0);
      expect(await redis.keys('bull:usage:req-a')).toEqual([]);
    } finally {
      redis.disconnect();
    }
  });
});

// Every producer opens the queue through UsageQueue, so its name, prefix and job shape
// are decided once (docs/architecture.md, "Messages").
const RAW_QUEUE = [/\bnew\s+Queue\s*[<(]/];

describe('usage queue, one producer', () => {
  it('recognises a queue opened by hand', () => {
    expect(RAW_QUEUE.some((p) => p.test('const q = new Queue(Queues.Usage, {'))).toBe(true);
    expect(RAW_QUEUE.some((p) => p.test('new Queue<UsageRecord>(name)'))).toBe(true);
    expect(RAW_QUEUE.some((p) => p.test('new UsageQueue({ connection })'))).toBe(false);
  });

  it('is never opened with a raw BullMQ Queue outside libs/messaging, specs included', () => {
    const files = sourceFiles({ roots: ['apps', 'libs', 'bench', 'test'], tests: true }).filter(
      (file) => !file.startsWith('libs/messaging/'),
    );
    expect(linesMatching(files, RAW_QUEUE)).toEqual([]);
  });
});
