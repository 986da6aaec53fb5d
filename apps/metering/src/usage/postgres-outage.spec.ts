import { createTestDatabase, PrivatePostgres, query, type TestDatabase } from '@switchyard/testing';
import { type UsageQueue } from '@switchyard/messaging';
import {
  createToken,
  databaseUrl,
  dropNamespace,
  enqueue,
  fileNamespace,
  meteringEnv,
  metric,
  settled,
  startMetering,
  tokenState,
  usageQueue,
  usageRecord,
  type RunningMetering,
} from '../testing/metering.fixture.js';

// Postgres stops while usage keeps arriving, then starts again: every job is billed once,
// and no attempt is spent on the outage. The Postgres is this file's own (a private server
// on a free port), so the machine's, which other runs share, is never stopped.

const OUTAGE_MS = 3_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Postgres outage', () => {
  const postgres = new PrivatePostgres();
  const runDatabaseUrl = process.env.DATABASE_URL;
  let database: TestDatabase;
  let metering: RunningMetering;
  let queue: UsageQueue;

  beforeAll(async () => {
    await postgres.start();
    database = await createTestDatabase(postgres.url);
    // The fixture's rows and reads go to this file's database; restored for the next file.
    process.env.DATABASE_URL = database.url;
    metering = await startMetering(meteringEnv(fileNamespace()));
    queue = usageQueue(metering.env);
  }, 60_000);

  afterAll(async () => {
    process.env.DATABASE_URL = runDatabaseUrl;
    await metering?.close();
    await queue?.close();
    if (metering) await dropNamespace(metering.env);
    await postgres.remove();
  });

  it('loses no usage and spends no attempt while Postgres is stopped and started again', async () => {
    const token = await createToken(null);
    const records: ReturnType<typeof usageRecord>[] = [];
    const jobIds: string[] = [];
    let producing = true;
    const produce = (async () => {
      for (let round = 0; producing || round < 60; round += 1) {
        const burst = Array.from({ length: 25 }, () =>
          usageRecord({
            tokenId: token.id,
            model: 'gpt-4o',
            usage: { promptTokens: 1_000, completionTokens: 100 },
          }),
        );
        records.push(...burst);
        jobIds.push(...(await enqueue(queue, burst)));
        await sleep(50);
      }
    })();

    let lowestReachable = 1;
    let heldDuringOutage = 0;
    try {
      await sleep(1_000);
      await postgres.stop();
      const outageEnds = Date.now() + OUTAGE_MS;
      while (Date.now() < outageEnds) {
        lowestReachable = Math.min(
          lowestReachable,
          (await metric(metering.url, 'metering_database_reachable')) ?? 1,
        );
        heldDuringOutage = Math.max(
          heldDuringOutage,
          (await metric(metering.url, 'metering_queue_depth')) ?? 0,
        );
        await sleep(200);
      }
    } finally {
      await postgres.start();
      producing = false;
    }
    await produce;
    await settled(queue, jobIds, 60_000);

    expect(lowestReachable).toBe(0);
    expect(heldDuringOutage).toBeGreaterThan(0);
    const [logged] = await query<{ rows: number }>(
      databaseUrl(),
      `SELECT count(*)::int AS "rows" FROM "UsageLog" WHERE "requestId" = ANY($1)`,
      [records.map((r) => r.requestId)],
    );
    expect(logged?.rows).toBe(records.length);
    // gpt-4o: 1000 prompt tokens at $2.50 and 100 completion tokens at $10 per million.
    expect((await tokenState(token.id)).usedQuota).toBe(String(records.length * 3_500));
    expect(await queue.getFailedCount()).toBe(0);
    expect(
      (await metric(metering.url, 'metering_job_failures_total', { reason: 'error' })) ?? 0,
    ).toBe(0);
    expect(await metric(metering.url, 'metering_database_reachable')).toBe(1);
  }, 120_000);
});
