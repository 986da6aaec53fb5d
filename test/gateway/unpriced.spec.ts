import { waitFor, query } from '@switchyard/testing';
import { freshAccount, Stack, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// UNPRICED_MODELS=refuse: a token with a quota may not spend it on a model without a
// price; a token without a quota may (docs/architecture.md, "Unpriced models").

describe('gateway: unpriced models refused to tokens with a quota', () => {
  const stack = new Stack({ edgeEnv: { UNPRICED_MODELS: 'refuse' } });
  let model: string;

  beforeAll(async () => {
    await stack.start();
    model = uniqueName('unpriced');
    await stack.createChannel({ models: [model], keys: [await freshAccount(stack)] });
  }, STACK_START_TIMEOUT_MS);

  afterAll(() => stack.stop());

  const ask = (key: string) =>
    stack
      .client(key)
      .chat.completions.create({ model, messages: [{ role: 'user', content: 'price?' }] })
      .then(
        () => ({ status: 200, code: null as string | null }),
        (error: { status: number; code: string }) => ({ status: error.status, code: error.code }),
      );

  it('refuses the model to a token with a quota until it has a price, and serves others', async () => {
    const limited = await stack.createToken({ quota: 1_000_000 });
    const unlimited = await stack.createToken();
    await stack.routable(unlimited.key, model);

    expect(await ask(limited.key)).toEqual({ status: 403, code: 'model_not_priced' });
    expect(await ask(unlimited.key)).toEqual({ status: 200, code: null });

    await query(
      stack.databaseUrl,
      `INSERT INTO "ModelPrice" (model, "inputPrice", "outputPrice", "updatedAt") VALUES ($1, 1, 1, now())`,
      [`${model.slice(0, -2)}*`],
    );
    await stack.publish('price.changed', {});
    await waitFor(async () => ((await ask(limited.key)).status === 200 ? true : undefined), {
      what: 'priced model served',
    });
  });
});
