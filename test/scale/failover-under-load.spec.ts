import { PrivatePgBouncer, waitFor } from '@switchyard/testing';
import {
  byStatus,
  chat,
  expectBalanced,
  recovery,
  sendLoad,
  usageRowsOf,
  type Answered,
} from '../support/load.js';
import { Nginx } from '../support/nginx.js';
import { stopEach } from '../support/teardown.js';
import { SentinelTopology } from '../support/redis-topology.js';
import { freshAccount, Stack, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// Two edges, two routers and two metering workers behind nginx (deploy/nginx), on a Redis
// master and replica watched by three Sentinels, every app reaching Postgres through a
// PgBouncer in transaction pooling (docs/scaling.md, "What was proven"). Under a steady
// load, one after another: an edge is SIGKILLed, then the Redis master, then PgBouncer is
// killed and started again, then a router and a metering worker are SIGKILLed. Afterwards
// every request has an answer, every answer an edge gave is billed exactly once, the
// token's used quota is the sum of its rows, and for each fault the answers that failed
// and the time until a request sent after it was served are printed.

/** At least this many; the load goes on until the last fault has had its answers. */
const REQUESTS = 600;
const CONCURRENCY = 6;
/** Answers let through between two faults, so each fault meets a load still running. */
const BETWEEN_FAULTS = REQUESTS / 10;
/** Each answer takes this long upstream, so the load outlasts every fault. */
const UPSTREAM_LATENCY_MS = 40;
/**
 * An edge hands usage to the queue in batches gathered for 50 ms (apps/edge, UsagePublisher):
 * a SIGKILL loses the records of what it answered just before (docs/reliability.md, "Limits
 * of what is shown"). Answers that ended this long before the kill may go unbilled; any
 * other must not. Generous, for a loaded machine's late timers.
 */
const UNFLUSHED_MS = 250;

describe('scale: two of each service behind nginx on Sentinel and PgBouncer, faults under load', () => {
  const sentinel = new SentinelTopology();
  const pgbouncer = new PrivatePgBouncer(process.env.DATABASE_URL!, 8);
  let stack: Stack | undefined;
  let nginx: Nginx | undefined;

  beforeAll(async () => {
    await sentinel.startAll();
    await pgbouncer.start();
    stack = new Stack({
      redisUrl: sentinel.url,
      appDatabaseUrl: (url) => pgbouncer.urlFor(url),
      edges: 2,
      routers: 2,
      metering: 2,
      edgeEnv: { UPSTREAM_FIRST_BYTE_TIMEOUT_MS: '1000' },
    });
    await stack.start();
    nginx = new Nginx(stack.edges.map((edge) => edge.url));
    await nginx.start();
  }, STACK_START_TIMEOUT_MS);

  afterAll(() =>
    stopEach(
      () => nginx?.stop(),
      () => stack?.stop(),
      () => Promise.all([sentinel.stop(), pgbouncer.remove()]),
    ),
  );

  it('an edge, the Redis master, PgBouncer, a router and a metering worker fail under load: every answer billed once, quotas exact', async () => {
    const s = stack!;
    const proxy = nginx!.url;
    const token = await s.createToken();
    const model = uniqueName('m');
    const account = await freshAccount(s);
    await s.createChannel({ models: [model], keys: [account] });
    await s.mockFault({ key: account, latencyMs: UPSTREAM_LATENCY_MS });
    await s.routable(token.key, model);
    const warmUp = await chat(proxy, token.key, {
      model,
      messages: [{ role: 'user', content: 'warm up' }],
    });
    expect(warmUp.status).toBe(200);

    const oldMaster = sentinel.masterPort;
    const faults: { name: string; at: number; note: string }[] = [];
    let edgeKilledAt = 0;
    /** Marks a fault's start, runs it, then lets BETWEEN_FAULTS answers through. */
    const fault = async (name: string, answered: () => number, run: () => Promise<string>) => {
      const at = performance.now();
      faults.push({ name, at, note: '' });
      faults[faults.length - 1]!.note = await run();
      const before = answered();
      await waitFor(() => answered() >= before + BETWEEN_FAULTS || undefined, {
        what: `answers after: ${name}`,
      });
    };
    const answers = await sendLoad({
      baseUrl: proxy,
      token: token.key,
      model,
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      mixStreams: true,
      midway: {
        after: BETWEEN_FAULTS,
        run: async (answered) => {
          await fault('edge SIGKILL', answered, async () => {
            await s.edges[0]!.stop('SIGKILL');
            edgeKilledAt = performance.now();
            return '';
          });
          await fault('Redis Sentinel master SIGKILL', answered, async () => {
            const killedAt = performance.now();
            await sentinel.killMaster();
            await waitFor(
              async () => (await sentinel.currentMasterPort()) !== oldMaster || undefined,
              { what: 'the Sentinels to promote the replica', intervalMs: 50 },
            );
            return `replica promoted after ${Math.round(performance.now() - killedAt)} ms`;
          });
          await fault('PgBouncer restart (SIGKILL, started again)', answered, async () => {
            const killedAt = performance.now();
            await pgbouncer.stop();
            await pgbouncer.start();
            return `listening again after ${Math.round(performance.now() - killedAt)} ms`;
          });
          await fault('router SIGKILL', answered, async () => {
            await s.routers[0]!.stop('SIGKILL');
            return '';
          });
          await fault('metering worker SIGKILL', answered, async () => {
            await s.meterings[0]!.stop('SIGKILL');
            return '';
          });
        },
      },
    });

    // Every request has an answer: served, or a retryable error (nginx's 502 for those in
    // flight on the edge that died; the edge's 503 while Redis had no master).
    const statuses = byStatus(answers);
    for (const status of Object.keys(statuses).map(Number)) {
      expect([200, 502, 503, 504]).toContain(status);
    }
    expect(statuses[200]).toBeGreaterThan(REQUESTS * 0.8);
    expect(faults).toHaveLength(5);
    // What an edge answered carries its request id; nginx's own 502 for a request cut with
    // its edge does not, and no edge is left to bill it.
    const byEdges = answers.filter((a) => a.id !== '');
    const fromProxy = answers.filter((a) => a.id === '');
    for (const cut of fromProxy) expect(cut.status).toBe(502);
    expect(fromProxy.length).toBeLessThanOrEqual(CONCURRENCY);

    // Every answer has its row but those the killed edge had not handed on yet. A job the
    // killed worker held is delivered again once its lock lapses: allow for that.
    const unflushed = (a: Answered) =>
      a.endedAt <= edgeKilledAt && a.endedAt > faults[0]!.at - UNFLUSHED_MS;
    const mustBill = byEdges.filter((a) => !unflushed(a));
    const books = await usageRowsOf(s.databaseUrl, token.id, [warmUp, ...mustBill], 75_000);
    const billedIds = new Set(books.rows.map((row) => row.requestId));
    const unbilled = byEdges.filter((a) => !billedIds.has(a.id));
    expect(unbilled.length).toBeLessThanOrEqual(CONCURRENCY);
    await expectBalanced(
      s.databaseUrl,
      token.id,
      [warmUp, ...byEdges.filter((a) => billedIds.has(a.id))],
      books,
    );

    process.stdout.write(
      [
        '',
        `failover under load: ${answers.length} requests at ${CONCURRENCY} at once through nginx, statuses ${JSON.stringify(statuses)}, ${books.rows.length} usage rows (the last ${books.settledMs} ms after the load); ${fromProxy.length} cut in flight with the edge (502 from nginx); ${unbilled.length} answered by it in its last ${UNFLUSHED_MS} ms and not billed`,
        ...faults.map(({ name, at, note }) => {
          const { recoveredMs, failed } = recovery(answers, at);
          return `  ${name}: ${note ? `${note}; ` : ''}failed before recovery ${JSON.stringify(failed)}; first request sent after it served ${recoveredMs} ms after`;
        }),
        '',
      ].join('\n'),
    );
  });
});
