import { waitFor, query } from '@switchyard/testing';
import { freshAccount, Stack, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// One price rule for the edge and metering (docs/architecture.md, "Prices"): a request is
// priced by its requested model, else by the model its channel sends upstream. An alias the
// price table does not list is therefore priced, at the edge (which refuses unpriced models
// here) as at metering (which bills it), by the model a channel maps it to.

describe('gateway + metering: one price rule', () => {
  const stack = new Stack({ metering: true, edgeEnv: { UNPRICED_MODELS: 'refuse' } });
  let alias: string;
  let upstream: string;

  beforeAll(async () => {
    await stack.start();
    alias = uniqueName('alias');
    upstream = uniqueName('real');
    // 3 USD per million tokens in, 5 out: every token of the row is visible in its cost.
    await query(
      stack.databaseUrl,
      `INSERT INTO "ModelPrice" (model, "inputPrice", "outputPrice", "updatedAt") VALUES ($1, 3000000, 5000000, now())`,
      [upstream],
    );
    await stack.publish('price.changed', { model: upstream });
    await stack.createChannel({
      models: [alias],
      modelMapping: { [alias]: upstream },
      keys: [await freshAccount(stack)],
    });
  }, STACK_START_TIMEOUT_MS);

  afterAll(() => stack.stop());

  it('prices an alias by its upstream model at the edge and in the bill', async () => {
    const token = await stack.createToken({ quota: 1_000_000_000 });
    await stack.routable(token.key, alias);
    // The edge knows the price once it has read the table: until then it serves anyway.
    const answer = await waitFor(
      () =>
        stack
          .client(token.key)
          .chat.completions.create({ model: alias, messages: [{ role: 'user', content: 'hi' }] })
          .then(
            (completion) => completion,
            (error: { code?: string }) => {
              if (error.code === 'model_not_priced') return undefined;
              throw error;
            },
          ),
      { what: 'the alias served to a token with a quota' },
    );
    expect(answer.choices.length).toBeGreaterThan(0);

    const row = await waitFor(
      async () => {
        const [found] = await query<{
          upstreamModel: string;
          promptTokens: number;
          completionTokens: number;
          cost: string;
        }>(
          stack.databaseUrl,
          `SELECT "upstreamModel", "promptTokens", "completionTokens", cost::text AS cost FROM "UsageLog" WHERE "tokenId" = $1`,
          [token.id],
        );
        return found;
      },
      { what: 'the request billed' },
    );
    expect(row.upstreamModel).toBe(upstream);
    expect(Number(row.cost)).toBe(3 * row.promptTokens + 5 * row.completionTokens);
  });
});
