import { type UsageQueue } from '@switchyard/messaging';
import { PrivatePgBouncer, query } from '@switchyard/testing';
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

// Metering through PgBouncer in transaction pooling (docs/scaling.md, "PgBouncer"): its
// settlements (plain SQL, statements that are prepared once per connection when direct)
// and its Prisma reads run with `?pgbouncer=true`, and PgBouncer killed and started again
// mid-load costs reconnections, not the process nor a record. The PgBouncer is this file's
// own, in front of the run's Postgres; the fixture's own reads go to Postgres directly.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('behind PgBouncer', () => {
  const bouncer = new PrivatePgBouncer(databaseUrl());
  let metering: RunningMetering | undefined;
  let queue: UsageQueue | undefined;

  beforeAll(async () => {
    await bouncer.start();
    metering = await startMetering(
      meteringEnv(fileNamespace(), { DATABASE_URL: bouncer.urlFor(databaseUrl()) }),
    );
    queue = usageQueue(metering.env);
  }, 60_000);

  afterAll(async () => {
    await metering?.close();
    await queue?.close();
    if (metering) await dropNamespace(metering.env);
    await bouncer.remove();
  });

  it('settles every record once while PgBouncer is killed and started again', async () => {
    const token = await createToken(10n ** 15n);
    const records: ReturnType<typeof usageRecord>[] = [];
    const jobIds: string[] = [];
    let producing = true;
    const produce = (async () => {
      for (let round = 0; producing || round < 40; round += 1) {
        const burst = Array.from({ length: 20 }, () =>
          usageRecord({
            tokenId: token.id,
            model: 'gpt-4o',
            usage: { promptTokens: 1_000, completionTokens: 100 },
          }),
        );
        records.push(...burst);
        jobIds.push(...(await enqueue(queue!, burst)));
        await sleep(40);
      }
    })();

    try {
      await sleep(800);
      await bouncer.stop();
      await sleep(1_000);
    } finally {
      await bouncer.start();
      producing = false;
    }
    await produce;
    await settled(queue!, jobIds, 60_000);

    const [logged] = await query<{ rows: number }>(
      databaseUrl(),
      `SELECT count(*)::int AS "rows" FROM "UsageLog" WHERE "requestId" = ANY($1)`,
      [records.map((r) => r.requestId)],
    );
    expect(logged?.rows).toBe(records.length);
    // gpt-4o: 1000 prompt tokens at $2.50 and 100 completion tokens at $10 per million.
    expect((await tokenState(token.id)).usedQuota).toBe(String(records.length * 3_500));
    expect(await queue!.getFailedCount()).toBe(0);
    expect(await metric(metering!.url, 'metering_database_reachable')).toBe(1);
  }, 120_000);
});
