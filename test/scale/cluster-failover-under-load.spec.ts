import { busConnectionOf, queuePrefixFor } from '@switchyard/messaging';
import { waitFor, type AppProcess } from '@switchyard/testing';
import {
  byStatus,
  chat,
  expectBalanced,
  recovery,
  sendLoad,
  usageRowsOf,
} from '../support/load.js';
import { Nginx } from '../support/nginx.js';
import { stopEach } from '../support/teardown.js';
import { pricedModel } from '../support/provider-gateway.js';
import { ClusterTopology } from '../support/redis-topology.js';
import { freshAccount, Stack, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// Two edges, two routers and two metering workers behind nginx on a six-node Redis Cluster
// (docs/scaling.md, "What was proven"). Under a steady load, the master serving the usage
// queue's slot is SIGKILLed; its replica is promoted by the others. Meanwhile the edges
// spool the usage they cannot queue and serve unheld where a hold cannot be taken
// (docs/reliability.md). Afterwards every request has an answer, every answer one usage
// row, and the token's used quota is the sum of their costs.

/** At least this many; the load goes on until the fault has had its answers. */
const REQUESTS = 400;
const CONCURRENCY = 6;
/** Answers let through before and after the fault, so it meets a load still running. */
const AROUND_FAULT = 80;
/** Each answer takes this long upstream, so the load outlasts the failover. */
const UPSTREAM_LATENCY_MS = 40;

/** Usage records the edges could not queue and spooled to disk, all edges together. */
async function spooled(edges: AppProcess[]): Promise<number> {
  let sum = 0;
  for (const edge of edges) {
    const metrics = await (await fetch(`${edge.opsUrl}/metrics`)).text();
    const match = /^edge_usage_records_total\{[^}]*outcome="spooled"[^}]*\} (\d+)/m.exec(metrics);
    sum += Number(match?.[1] ?? 0);
  }
  return sum;
}

describe('scale: two of each service behind nginx on a Redis Cluster, a master killed under load', () => {
  const cluster = new ClusterTopology();
  let stack: Stack | undefined;
  let nginx: Nginx | undefined;

  beforeAll(async () => {
    await cluster.startAll();
    stack = new Stack({
      redisUrl: 'redis://127.0.0.1',
      redisClusterNodes: cluster.nodes,
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
      () => cluster.stop(),
    ),
  );

  it('the master of the usage queue dies under load: every answer billed once, the quota exact', async () => {
    const s = stack!;
    const proxy = nginx!.url;
    // A quota and a priced model, so every request also holds its worst case on a spend
    // account in the cluster.
    const token = await s.createToken({ quota: 1_000_000_000_000 });
    const model = await pricedModel(s, 'm');
    const account = await freshAccount(s);
    await s.createChannel({ models: [model], keys: [account] });
    await s.mockFault({ key: account, latencyMs: UPSTREAM_LATENCY_MS });
    await s.routable(token.key, model);
    const warmUp = await chat(proxy, token.key, {
      model,
      messages: [{ role: 'user', content: 'warm up' }],
    });
    expect(warmUp.status).toBe(200);

    const connection = busConnectionOf({
      REDIS_URL: 'redis://127.0.0.1',
      REDIS_CLUSTER_NODES: cluster.nodes,
      REDIS_PREFIX: s.prefix,
    });
    const queueKey = `${queuePrefixFor(connection.redis!, `${connection.prefix}:bull`)}:x`;
    let killedAt = 0;
    let promotedMs = 0;
    const answers = await sendLoad({
      baseUrl: proxy,
      token: token.key,
      model,
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      mixStreams: true,
      midway: {
        after: AROUND_FAULT,
        run: async (answered) => {
          const killed = await cluster.killMasterOf(queueKey);
          killedAt = performance.now();
          await waitFor(async () => (await cluster.masterOf(queueKey)) !== killed || undefined, {
            what: 'a replica promoted for the queue slot',
            timeoutMs: 30_000,
            intervalMs: 100,
          });
          promotedMs = Math.round(performance.now() - killedAt);
          const before = answered();
          await waitFor(() => answered() >= before + AROUND_FAULT || undefined, {
            what: 'answers after the failover',
            timeoutMs: 30_000,
          });
        },
      },
    });

    // Served, or a retryable error while the slot had no master.
    const statuses = byStatus(answers);
    for (const status of Object.keys(statuses).map(Number)) {
      expect([200, 503, 504]).toContain(status);
    }
    expect(statuses[200]).toBeGreaterThan(answers.length * 0.8);
    // Every answer carries its edge's request id, and each has its row: none was lost with
    // the master (a batch it took before dying was on its replica, or spooled and replayed).
    expect(answers.every((a) => a.id !== '')).toBe(true);
    const books = await usageRowsOf(s.databaseUrl, token.id, [warmUp, ...answers], 75_000);
    await expectBalanced(s.databaseUrl, token.id, [warmUp, ...answers], books);
    // Printed, not asserted: a batch refused while the slot has no master, or not yet on
    // the master's replica when it died, is spooled and replayed.
    const spooledRecords = await spooled(s.edges);

    const { recoveredMs, failed } = recovery(answers, killedAt);
    process.stdout.write(
      [
        '',
        `cluster failover under load: ${answers.length} requests at ${CONCURRENCY} at once through nginx, statuses ${JSON.stringify(statuses)}, ${books.rows.length} usage rows (the last ${books.settledMs} ms after the load), ${spooledRecords} records spooled by the edges meanwhile`,
        `  usage queue's master SIGKILL: replica promoted after ${promotedMs} ms; failed before recovery ${JSON.stringify(failed)}; first request sent after it served ${recoveredMs} ms after`,
        '',
      ].join('\n'),
    );
  });
});
