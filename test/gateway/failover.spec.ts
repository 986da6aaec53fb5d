import { query } from '@switchyard/testing';
import { waitFor } from '@switchyard/testing';
import OpenAI from 'openai';
import { freshAccount, Stack, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';
import { UsageJobs } from '../support/usage-queue.js';

// Retryable failures before the first byte go to the next channel, excluding those tried;
// bytes already sent are never retried. Health decisions follow (docs/architecture.md, "The
// router").

describe('gateway: failover and health', () => {
  const stack = new Stack({
    edgeEnv: { UPSTREAM_FIRST_BYTE_TIMEOUT_MS: '400' },
    routerEnv: { PROBE_INTERVAL_MS: '300' },
  });
  let token: { key: string };
  let usage: UsageJobs;

  beforeAll(async () => {
    await stack.start();
    token = await stack.createToken();
    usage = new UsageJobs(stack.redisUrl, stack.prefix);
  }, STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await usage.close();
    await stack.stop();
  });

  /** Two channels in one tier: `first` is tried first (heavy weight), `second` is the fallback. */
  async function pair(): Promise<{
    model: string;
    first: string;
    second: string;
    firstChannel: number;
    firstKey: number;
  }> {
    const model = uniqueName('m');
    const [first, second] = [await freshAccount(stack), await freshAccount(stack)];
    const created = await stack.createChannel({ models: [model], keys: [first], priority: 10 });
    await stack.createChannel({ models: [model], keys: [second], priority: 0 });
    await stack.routable(token.key, model);
    return { model, first, second, firstChannel: created.id, firstKey: created.keyIds[0]! };
  }

  const ask = (model: string) =>
    stack
      .client(token.key)
      .chat.completions.create({ model, messages: [{ role: 'user', content: 'fail over' }] })
      .withResponse();

  it.each([
    ['a banned account (401)', { status: 401 }],
    ['a rate-limited account (429)', { status: 429 }],
    ['a server error (500)', { status: 500 }],
    ['an upstream that never answers', { hang: true }],
    ['a connection cut before the first byte', { disconnectAfterChunks: 0 }],
  ])('fails over on %s, trying each channel once', async (_name, fault) => {
    const { model, first, second } = await pair();
    await stack.mockFault({ key: first, times: 1, ...fault });
    const { data, response } = await ask(model);
    expect(data.choices[0]?.message.content).toBe('Echo: fail over');
    expect((await stack.mockStats(first)).requests).toBe(1);
    expect((await stack.mockStats(second)).served).toBe(1);
    const record = await waitFor(() => usage.find(response.headers.get('x-request-id')!), {
      what: 'usage job',
    });
    expect(record).toMatchObject({ attempts: 2, status: 200 });
  });

  it('never retries once bytes reached the client: a cut stream ends with an error the SDK raises, and is metered', async () => {
    const { model, first, second } = await pair();
    await stack.mockFault({ key: first, disconnectAfterChunks: 2, times: 1 });
    const { data: stream, response } = await stack
      .client(token.key)
      .chat.completions.create({
        model,
        stream: true,
        messages: [{ role: 'user', content: 'a reply long enough to be cut' }],
      })
      .withResponse();
    let text = '';
    const failure = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(String((failure as Error).message)).toMatch(/interrupted/);
    expect(text.length).toBeGreaterThan(0);
    expect((await stack.mockStats(second)).requests).toBe(0);

    const record = await waitFor(() => usage.find(response.headers.get('x-request-id')!), {
      what: 'usage job',
    });
    expect(record).toMatchObject({
      status: 200,
      errorCode: 'stream_interrupted',
      stream: true,
      usage: null,
    });
    expect(record.completionText).toBe(text);
    expect(record.promptText).toContain('a reply long enough to be cut');
  });

  it('disables a banned key automatically and a probe re-enables it once the account recovers', async () => {
    const { model, first, firstKey } = await pair();
    await stack.mockAccount(first, { banned: true });
    await ask(model);
    await waitFor(
      async () => {
        const [row] = await query<{ status: string }>(
          stack.databaseUrl,
          'SELECT status FROM "ChannelKey" WHERE id = $1',
          [firstKey],
        );
        return row?.status === 'auto_disabled' ? true : undefined;
      },
      { what: 'key auto-disabled' },
    );
    const requestsWhileDisabled = (await stack.mockStats(first)).requests;
    for (let i = 0; i < 3; i += 1) await ask(model);
    // Only probes reach the banned account now, not traffic.
    expect((await stack.mockStats(first)).served).toBe(0);
    expect((await stack.mockStats(first)).requests - requestsWhileDisabled).toBeLessThan(10);

    await stack.mockAccount(first, { banned: false });
    await waitFor(
      async () => {
        const [row] = await query<{ status: string }>(
          stack.databaseUrl,
          'SELECT status FROM "ChannelKey" WHERE id = $1',
          [firstKey],
        );
        return row?.status === 'enabled' ? true : undefined;
      },
      { what: 'key re-enabled by the probe' },
    );
    await waitFor(
      async () => ((await ask(model)) && (await stack.mockStats(first)).served > 0) || undefined,
      { what: 'traffic back' },
    );
  });

  it('never re-enables a key an administrator disabled', async () => {
    const { model, first, firstKey } = await pair();
    await query(stack.databaseUrl, `UPDATE "ChannelKey" SET status = 'disabled' WHERE id = $1`, [
      firstKey,
    ]);
    await stack.publish('channel.changed', { action: 'updated' });
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    const [row] = await query<{ status: string }>(
      stack.databaseUrl,
      'SELECT status FROM "ChannelKey" WHERE id = $1',
      [firstKey],
    );
    expect(row?.status).toBe('disabled');
    await ask(model);
    expect((await stack.mockStats(first)).requests).toBe(0);
  });

  it('cools a rate-limited account down, so the next requests skip it without trying', async () => {
    const { model, first, second, firstKey } = await pair();
    await stack.mockFault({ key: first, status: 429, times: 1 });
    await ask(model);
    // The edge reports the 429 to the router, whose next snapshot cools the account down.
    await stack.snapshotSettled(
      (snapshot) =>
        snapshot.channels.some((c) => c.keys.some((k) => k.id === firstKey && k.coolingUntil)),
      `key ${firstKey} cooling down in the routing snapshot`,
    );
    for (let i = 0; i < 3; i += 1) await ask(model);
    expect((await stack.mockStats(first)).requests).toBe(1);
    expect((await stack.mockStats(second)).served).toBe(4);
  });

  it('opens the breaker of a failing channel and closes it when a probe succeeds', async () => {
    const { model, first, second, firstChannel } = await pair();
    // Three failures open the breaker; three more keep the first probes failing.
    await stack.mockFault({ key: first, status: 503, times: 6 });
    for (let i = 0; i < 3; i += 1) await ask(model);
    await stack.routingSettled(firstChannel, false);
    const servedBefore = (await stack.mockStats(second)).served;
    await ask(model);
    expect((await stack.mockStats(second)).served).toBe(servedBefore + 1);
    expect((await stack.mockStats(first)).served).toBe(0);
    // Once the upstream recovers, a probe closes the breaker and traffic returns.
    await stack.routingSettled(firstChannel, true);
    const probed = (await stack.mockStats(first)).served;
    await ask(model);
    expect((await stack.mockStats(first)).served).toBe(probed + 1);
  });
});
