import { waitFor, type AppProcess } from '@switchyard/testing';
import {
  byStatus,
  chat,
  expectBalanced,
  openAIError,
  sendLoad,
  usageRows,
  type Answered,
} from '../support/load.js';
import { Nginx } from '../support/nginx.js';
import { freshAccount, Stack, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// The suite as deployed with replicas (docs/reliability.md, "Replicas"): nginx with the
// configuration of deploy/nginx in front of two edges, two routers, two metering workers,
// one Postgres, one Redis. An account's limits hold across the edges (the upstream never
// sees more than they allow), and every request is billed exactly once.

const RPM = 30;
const CONCURRENCY = 2;

/** Usage records an edge handed on (queued or spooled): the requests it served. */
async function handled(edge: AppProcess): Promise<number> {
  const metrics = await (await fetch(`${edge.opsUrl}/metrics`)).text();
  return [...metrics.matchAll(/^edge_usage_records_total\{[^}]*\} (\d+)/gm)].reduce(
    (sum, [, value]) => sum + Number(value),
    0,
  );
}

describe('faults: two of everything behind nginx', () => {
  const stack = new Stack({ edges: 2, routers: 2, metering: 2 });
  let nginx: Nginx;

  beforeAll(async () => {
    await stack.start();
    nginx = new Nginx(stack.edges.map((edge) => edge.url));
    await nginx.start();
  }, STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await nginx?.stop();
    await stack.stop();
  });

  it(`holds an account to ${RPM} requests a minute and ${CONCURRENCY} at once across the edges, and bills each request once`, async () => {
    const model = uniqueName('m');
    const account = await freshAccount(stack);
    await stack.createChannel({
      models: [model],
      keys: [account],
      limits: { rpm: RPM, concurrency: CONCURRENCY },
    });
    const token = await stack.createToken();
    await stack.routable(token.key, model);

    // At once: slow answers, so requests overlap on both edges.
    await stack.mockFault({ key: account, latencyMs: 300 });
    const burst = await sendLoad({
      baseUrl: nginx.url,
      token: token.key,
      model,
      requests: 24,
      concurrency: 24,
    });
    expect((await stack.mockStats(account)).maxInFlight).toBeLessThanOrEqual(CONCURRENCY);
    await stack.mockControl('DELETE', '/faults');

    // Then quickly, well past the minute's allowance.
    const rush = await sendLoad({
      baseUrl: nginx.url,
      token: token.key,
      model,
      requests: 120,
      concurrency: 4,
    });
    // A block of the minute's units one edge took ahead and has not spent goes back within
    // its validity (1 s, libs/limiter allowance.ts; docs/architecture.md, "Account limits"):
    // a rush that ends sooner can leave the minute a unit short, never over. Requests a
    // little apart then fill it.
    const trickle: Answered[] = [];
    await waitFor(
      async () => {
        if ((await stack.mockStats(account)).requests >= RPM) return true;
        trickle.push(
          await chat(nginx.url, token.key, { model, messages: [{ role: 'user', content: 'x' }] }),
        );
        return undefined;
      },
      { what: `the upstream to see ${RPM} requests`, intervalMs: 300, timeoutMs: 10_000 },
    );
    const answers = [...burst, ...rush, ...trickle];
    const seen = await stack.mockStats(account);
    const served = answers.filter((a) => a.status === 200).length;
    expect(seen.maxInFlight).toBeLessThanOrEqual(CONCURRENCY);
    expect(seen.maxRequestsPerWindow).toBeLessThanOrEqual(RPM);
    expect(seen.requests).toBe(RPM);
    expect(served).toBe(seen.served);
    // What was refused was refused cleanly, as the channel being saturated.
    for (const refused of answers.filter((a) => a.status !== 200)) {
      expect(refused.status).toBe(503);
      expect(openAIError(refused).code).toBe('no_available_channel');
    }
    for (const edge of stack.edges) expect(await handled(edge)).toBeGreaterThan(0);

    const books = await usageRows(stack.databaseUrl, token.id, answers.length);
    await expectBalanced(stack.databaseUrl, token.id, answers, books);
    process.stdout.write(
      `\nreplicas: ${answers.length} requests through nginx (${trickle.length} after the rush), statuses ${JSON.stringify(byStatus(answers))}; upstream saw ${seen.requests} (at most ${seen.maxInFlight} at once, ${seen.maxRequestsPerWindow} in a minute); edges handled ${(await Promise.all(stack.edges.map(handled))).join(' and ')}; ${books.rows.length} usage rows\n`,
    );
  });
});
