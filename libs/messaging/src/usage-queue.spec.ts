import {
  USAGE_BATCH_JOB_NAME,
  USAGE_BATCH_MAX_RECORDS,
  USAGE_JOB_NAME,
  USAGE_JOB_OPTIONS,
  type UsageRecord,
} from '@switchyard/contracts';
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

  afterEach(async () => {
    await queue.obliterate({ force: true });
  });

  it('adds a batch as one job, named and retried as metering expects', async () => {
    const records = [record('req-a'), record('req-b')];
    const jobId = await queue.addBatch(records);
    const job = await queue.getJob(jobId);
    expect(job?.name).toBe(USAGE_BATCH_JOB_NAME);
    expect(job?.data).toEqual({ records });
    expect(job?.opts).toMatchObject({
      attempts: USAGE_JOB_OPTIONS.attempts,
      backoff: USAGE_JOB_OPTIONS.backoff,
    });
    expect(await queue.getWaitingCount()).toBe(1);
  });

  it('keeps one job when the same batch is added again (a spool replay, a retried publish)', async () => {
    const first = await queue.addBatch([record('req-c'), record('req-d')]);
    const again = await queue.addBatch([record('req-c'), record('req-d')]);
    const other = await queue.addBatch([record('req-c'), record('req-e')]);
    expect(again).toBe(first);
    expect(other).not.toBe(first);
    expect(await queue.getWaitingCount()).toBe(2);
  });

  it('names a batch by its earliest request time, readable from the id alone', () => {
    const jobId = UsageQueue.batchJobId([
      { ...record('req-f'), requestedAt: 1_700_000_000_500 },
      { ...record('req-g'), requestedAt: 1_700_000_000_100 },
    ]);
    expect(jobId).toMatch(/^batch-1700000000100-[0-9a-f]{32}$/);
    expect(UsageQueue.requestedAtOf(jobId)).toBe(1_700_000_000_100);
    expect(UsageQueue.requestedAtOf('0c9a4c0e-3f55-4bd8-a3c6-3b9d3b0a7f21')).toBeUndefined();
  });

  it('refuses an empty batch and one over the size metering accepts', async () => {
    await expect(queue.addBatch([])).rejects.toThrow(RangeError);
    const tooMany = Array.from({ length: USAGE_BATCH_MAX_RECORDS + 1 }, (_, i) => record(`r${i}`));
    await expect(queue.addBatch(tooMany)).rejects.toThrow(`1 to ${USAGE_BATCH_MAX_RECORDS}`);
    expect(await queue.getWaitingCount()).toBe(0);
  });

  it('adds single-record jobs under the ids given, once each', async () => {
    await queue.addSingleRecords([{ jobId: 'req-h', data: record('req-h') }]);
    await queue.addSingleRecords([
      { jobId: 'req-h', data: record('req-h') },
      { jobId: 'batch-1-abc-0', data: { requestId: 42 } },
    ]);
    const job = await queue.getJob('req-h');
    expect(job?.name).toBe(USAGE_JOB_NAME);
    expect(job?.data).toEqual(record('req-h'));
    expect((await queue.getJob('batch-1-abc-0'))?.data).toEqual({ requestId: 42 });
    expect(await queue.getWaitingCount()).toBe(2);
  });

  it('lets a tool shorten the retries of what it adds', async () => {
    const jobId = await queue.addBatch([record('req-i')], { attempts: 1 });
    await queue.addSingleRecords([{ jobId: 'req-j', data: record('req-j') }], { attempts: 2 });
    expect((await queue.getJob(jobId))?.opts.attempts).toBe(1);
    expect((await queue.getJob('req-j'))?.opts.attempts).toBe(2);
  });

  it("stores under the installation's namespace only", async () => {
    const jobId = await queue.addBatch([record('req-k')]);
    const redis = new Redis(url);
    try {
      const keys = await redis.keys(`${prefix}:usage:*`);
      expect(keys.length).toBeGreaterThan(0);
      expect(await redis.keys(`bull:usage:${jobId}`)).toEqual([]);
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
