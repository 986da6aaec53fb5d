import { waitFor, query, startApp } from '@switchyard/testing';
import { UsageQueue } from '@switchyard/messaging';
import {
  createToken,
  databaseUrl,
  dropNamespace,
  enqueue,
  fileNamespace,
  meteringEnv,
  settled,
  tokenState,
  usageQueue,
  usageRecord,
} from './testing/metering.fixture.js';

// The built worker (dist/main.js) stopped with SIGTERM in the middle of a backlog: the jobs
// it had taken finish and commit before it exits, the rest wait in Redis for the next start.

/** Records in the jobs still waiting. */
async function waitingRecords(queue: UsageQueue): Promise<number> {
  const jobs = await queue.getJobs(['waiting']);
  return jobs.reduce((sum, job) => sum + UsageQueue.recordsOf(job).length, 0);
}

async function loggedCount(requestIds: string[]): Promise<number> {
  const [row] = await query<{ rows: number }>(
    databaseUrl(),
    `SELECT count(*)::int AS "rows" FROM "UsageLog" WHERE "requestId" = ANY($1)`,
    [requestIds],
  );
  return row?.rows ?? 0;
}

describe('graceful shutdown', () => {
  const env = meteringEnv(fileNamespace());
  let queue: UsageQueue;

  beforeAll(() => {
    queue = usageQueue(env);
  });

  afterAll(async () => {
    await queue.close();
    await dropNamespace(env);
  });

  it('finishes the jobs it holds on SIGTERM and leaves the rest queued, none lost', async () => {
    const token = await createToken(null);
    const records = Array.from({ length: 20_000 }, () =>
      usageRecord({
        tokenId: token.id,
        model: 'gpt-4o-mini',
        usage: { promptTokens: 100, completionTokens: 10 },
      }),
    );
    const ids = records.map((r) => r.requestId);
    const jobIds = await enqueue(queue, records);

    const appEnv = {
      REDIS_PREFIX: env.REDIS_PREFIX,
      USAGE_CONCURRENCY: '2',
      USAGE_BATCH_SIZE: '200',
    };
    const first = await startApp('metering', { env: appEnv, readyPath: '/readyz' });
    // 21 micro-dollars a request: wait until a thousand are billed.
    await waitFor(
      async () => (BigInt((await tokenState(token.id)).usedQuota) >= 21_000n ? true : undefined),
      { timeoutMs: 30_000, what: 'some usage settled' },
    );
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(first.output()).toContain('"message":"stopped"');

    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed');
    expect(counts).toMatchObject({ active: 0, delayed: 0, failed: 0 });
    expect(counts.waiting).toBeGreaterThan(0);
    // Every record is either billed or still waiting: none was dropped, none is half done.
    expect((await loggedCount(ids)) + (await waitingRecords(queue))).toBe(records.length);

    const second = await startApp('metering', { env: appEnv, readyPath: '/readyz' });
    try {
      await settled(queue, jobIds, 60_000);
    } finally {
      await second.stop('SIGTERM');
    }
    expect(await loggedCount(ids)).toBe(records.length);
    // gpt-4o-mini: 100 prompt tokens at $0.15 and 10 completion tokens at $0.60 per million.
    expect((await tokenState(token.id)).usedQuota).toBe(String(records.length * 21));
  }, 120_000);
});
