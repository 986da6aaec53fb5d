import { waitFor } from '@switchyard/testing';
import { freshAccount, Stack, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// Where requests go: priority tiers, weights inside a tier, saturation, and per-account
// limits held across two edge replicas.

describe('gateway: channel selection', () => {
  const stack = new Stack({ edges: 2 });
  let token: { key: string };

  beforeAll(async () => {
    await stack.start();
    token = await stack.createToken();
  }, STACK_START_TIMEOUT_MS);

  afterAll(() => stack.stop());

  const ask = (model: string, edge = stack.edge) =>
    stack
      .client(token.key, { edge })
      .chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] });

  it('sends everything to the highest priority tier while it can serve', async () => {
    const model = uniqueName('m');
    const [high, low] = [await freshAccount(stack), await freshAccount(stack)];
    await stack.createChannel({ models: [model], keys: [high], priority: 10 });
    await stack.createChannel({ models: [model], keys: [low], priority: 0 });
    await stack.routable(token.key, model);
    for (let i = 0; i < 20; i += 1) await ask(model);
    expect((await stack.mockStats(high)).served).toBe(20);
    expect((await stack.mockStats(low)).served).toBe(0);
  });

  it('spreads requests over a tier in proportion to the weights', async () => {
    const model = uniqueName('m');
    const accounts = [
      await freshAccount(stack),
      await freshAccount(stack),
      await freshAccount(stack),
    ];
    const weights = [1, 2, 5];
    for (const [i, key] of accounts.entries())
      await stack.createChannel({ models: [model], keys: [key], weight: weights[i] });
    await stack.routable(token.key, model);
    const total = 400;
    for (let i = 0; i < total; i += 8)
      await Promise.all(Array.from({ length: 8 }, () => ask(model)));
    const served = await Promise.all(
      accounts.map(async (key) => (await stack.mockStats(key)).served),
    );
    expect(served.reduce((a, b) => a + b, 0)).toBe(total);
    // Expected shares 1/8, 2/8, 5/8, each within 4 standard deviations of a binomial share
    // (0.066, 0.087 and 0.097 for 400 requests): a fair pick fails this once in ~16,000 runs.
    served.forEach((count, i) => {
      const share = weights[i]! / 8;
      const tolerance = 4 * Math.sqrt((share * (1 - share)) / total);
      expect(Math.abs(count / total - share)).toBeLessThan(tolerance);
    });
  });

  it('fills the next account of a pool, then the lower tier, when accounts are at their limits', async () => {
    const model = uniqueName('m');
    const [a, b, fallback] = [
      await freshAccount(stack),
      await freshAccount(stack),
      await freshAccount(stack),
    ];
    await stack.createChannel({
      models: [model],
      keys: [a, b],
      kind: 'aggregated',
      priority: 5,
      limits: { rpm: 2 },
    });
    await stack.createChannel({ models: [model], keys: [fallback], priority: 0 });
    await stack.routable(token.key, model);
    for (let i = 0; i < 6; i += 1) await ask(model);
    expect((await stack.mockStats(a)).served).toBe(2);
    expect((await stack.mockStats(b)).served).toBe(2);
    expect((await stack.mockStats(fallback)).served).toBe(2);
  });

  it('answers 503 no_available_channel when every account is saturated', async () => {
    const model = uniqueName('m');
    const only = await freshAccount(stack);
    await stack.createChannel({ models: [model], keys: [only], limits: { rpm: 1 } });
    await stack.routable(token.key, model);
    await ask(model);
    await expect(ask(model)).rejects.toMatchObject({ status: 503, code: 'no_available_channel' });
    expect((await stack.mockStats(only)).requests).toBe(1);
  });

  it("never lets two edges together exceed an account's requests per minute or concurrency", async () => {
    const model = uniqueName('m');
    const limited = await freshAccount(stack, { rpm: 10, concurrency: 3 });
    await stack.createChannel({
      models: [model],
      keys: [limited],
      limits: { rpm: 10, concurrency: 3 },
    });
    await stack.routable(token.key, model);
    await stack.mockFault({ key: limited, latencyMs: 150 });
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => ask(model, stack.edges[i % 2])),
    );
    const served = results.filter((r) => r.status === 'fulfilled').length;
    const refused = results.filter((r) => r.status === 'rejected');
    expect(served).toBeGreaterThan(0);
    expect(served).toBeLessThanOrEqual(10);
    for (const r of refused) expect(r.reason).toMatchObject({ status: 503 });
    const stats = await stack.mockStats(limited);
    // The provider never had to refuse anything: the gateway kept within its limits.
    expect(stats.rateLimited).toBe(0);
    expect(stats.maxRequestsPerWindow).toBeLessThanOrEqual(10);
    expect(stats.maxInFlight).toBeLessThanOrEqual(3);
  });

  it('applies a channel change on every edge within a second', async () => {
    const model = uniqueName('m');
    const account = await freshAccount(stack);
    const { id } = await stack.createChannel({ models: [model], keys: [account] });
    await stack.routable(token.key, model);
    await stack.setChannelStatus(id, 'disabled');
    for (const edge of stack.edges) {
      await waitFor(
        async () =>
          // Its only channel disabled, the model is served by none: 404 model_not_found.
          ((await ask(model, edge).catch((e: { status?: number }) => e)) as { status?: number })
            .status === 404 || undefined,
        { timeoutMs: 1_000, what: 'channel disabled on every edge' },
      );
    }
  });
});
