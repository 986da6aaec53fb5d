import { waitFor, query } from '@switchyard/testing';
import { freshAccount, Stack, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// Quotas across services: the edge meters, metering settles and announces exhaustion,
// every edge then refuses the token (docs/specification.md, "Tokens").

describe('gateway + metering: quotas', () => {
  const stack = new Stack({ edges: 2, metering: true });
  let model: string;

  beforeAll(async () => {
    await stack.start();
    model = uniqueName('priced');
    // 1 USD per million tokens in and out: each mock answer costs a few micro-dollars.
    await query(
      stack.databaseUrl,
      `INSERT INTO "ModelPrice" (model, "inputPrice", "outputPrice", "updatedAt") VALUES ($1, 1000000, 1000000, now())`,
      [model],
    );
    await stack.publish('price.changed', { model });
    await stack.createChannel({ models: [model], keys: [await freshAccount(stack)] });
  }, STACK_START_TIMEOUT_MS);

  afterAll(() => stack.stop());

  const ask = (key: string, edge = stack.edge) =>
    stack.client(key, { edge }).chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'spend some quota' }],
    });

  it('bills every request once and refuses the token on every edge once its quota is spent', async () => {
    const token = await stack.createToken({ quota: 40 });
    let served = 0;
    for (let i = 0; i < 40 && served < 30; i += 1) {
      const outcome = await ask(token.key, stack.edges[i % 2]).then(
        () => 'ok',
        (error: { status?: number }) => error.status,
      );
      if (outcome !== 'ok') break;
      served += 1;
      // Let metering settle between requests, so exhaustion lands at a known point.
      await waitFor(
        async () => {
          const [row] = await query<{ n: string }>(
            stack.databaseUrl,
            'SELECT count(*) AS n FROM "UsageLog" WHERE "tokenId" = $1',
            [token.id],
          );
          return Number(row!.n) === served ? true : undefined;
        },
        { what: 'usage settled' },
      );
      const [state] = await query<{ status: string }>(
        stack.databaseUrl,
        'SELECT status FROM "Token" WHERE id = $1',
        [token.id],
      );
      if (state!.status === 'exhausted') break;
    }
    expect(served).toBeGreaterThan(1);
    const [settled] = await query<{ status: string; used: string; billed: string }>(
      stack.databaseUrl,
      `SELECT t.status, t."usedQuota"::text AS used, (SELECT sum(cost) FROM "UsageLog" u WHERE u."tokenId" = t.id)::text AS billed
       FROM "Token" t WHERE t.id = $1`,
      [token.id],
    );
    expect(settled).toMatchObject({ status: 'exhausted' });
    expect(settled!.used).toBe(settled!.billed);
    expect(Number(settled!.used)).toBeGreaterThanOrEqual(40);

    // Both edges refuse it within a second of the announcement.
    for (const edge of stack.edges) {
      await waitFor(
        async () =>
          (
            (await ask(token.key, edge).catch((e: { status?: number; code?: string }) => e)) as {
              code?: string;
            }
          ).code === 'insufficient_quota' || undefined,
        { timeoutMs: 1_000, what: `exhausted token refused on ${edge.url}` },
      );
    }
  });

  it('keeps serving an unlimited token and records its usage', async () => {
    const token = await stack.createToken({ quota: null });
    for (let i = 0; i < 5; i += 1) await ask(token.key);
    await waitFor(
      async () => {
        const [row] = await query<{ used: string }>(
          stack.databaseUrl,
          'SELECT "usedQuota"::text AS used FROM "Token" WHERE id = $1',
          [token.id],
        );
        return Number(row!.used) > 0 ? true : undefined;
      },
      { what: 'usage recorded for the unlimited token' },
    );
  });
});
