import { waitFor } from '@switchyard/testing';
import {
  edgeSnapshotVersion,
  freshAccount,
  Stack,
  uniqueName,
  STACK_START_TIMEOUT_MS,
} from '../support/stack.js';
import { UsageJobs } from '../support/usage-queue.js';

// Parts of the suite going away: the router (edges serve from their last snapshot and a
// standby takes over) and the edge itself (SIGTERM drains what is in flight). Redis,
// Postgres and metering workers going away under load are in test/faults.

describe('gateway: the router goes away', () => {
  const stack = new Stack({ routers: 2 });
  let token: { key: string };

  beforeAll(async () => {
    await stack.start();
    token = await stack.createToken();
  }, STACK_START_TIMEOUT_MS);

  afterAll(() => stack.stop());

  it('keeps serving from the last snapshot, and a standby takes over the routing', async () => {
    const model = uniqueName('m');
    await stack.createChannel({ models: [model], keys: [await freshAccount(stack)] });
    const ask = (m: string) =>
      stack
        .client(token.key)
        .chat.completions.create({ model: m, messages: [{ role: 'user', content: 'x' }] });
    await ask(model);

    const leader = await waitFor(
      () => stack.routers.find((r) => r.output().includes('now the leader')),
      { what: 'a leader' },
    );
    const standby = stack.routers.find((r) => r !== leader)!;
    await leader.stop('SIGKILL');
    // The standby leads once the dead leader's lock expires (at most its 5 s lifetime).
    // No router leads now: the edge still has everything it needs.
    for (let i = 0; i < 5; i += 1)
      await expect(ask(model)).resolves.toMatchObject({ object: 'chat.completion' });

    await waitFor(() => (standby.output().includes('now the leader') ? true : undefined), {
      what: 'the standby leading',
    });
    const versionBefore = await edgeSnapshotVersion(stack.edge);
    const later = uniqueName('m');
    await stack.createChannel({ models: [later], keys: [await freshAccount(stack)] });
    await expect(ask(later)).resolves.toMatchObject({ object: 'chat.completion' });
    expect(await edgeSnapshotVersion(stack.edge)).toBeGreaterThan(versionBefore);
  });
});

describe('gateway: the edge shuts down', () => {
  const stack = new Stack();
  let token: { key: string };

  beforeAll(async () => {
    await stack.start();
    token = await stack.createToken();
  }, STACK_START_TIMEOUT_MS);

  afterAll(() => stack.stop());

  it('finishes the streams in flight on SIGTERM, meters them, and exits cleanly', async () => {
    const model = uniqueName('m');
    const account = await freshAccount(stack);
    await stack.createChannel({ models: [model], keys: [account] });
    await stack.mockFault({ key: account, chunkDelayMs: 100, times: 1 });
    const { data: stream, response } = await stack
      .client(token.key)
      .chat.completions.create({
        model,
        stream: true,
        messages: [{ role: 'user', content: 'one two three four five six' }],
      })
      .withResponse();
    let streaming!: () => void;
    const firstChunk = new Promise<void>((resolve) => (streaming = resolve));
    const reading = (async () => {
      let text = '';
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        streaming();
      }
      return text;
    })();
    // Stopped mid-stream: once the first chunk is in, with the rest still to come.
    await Promise.race([firstChunk, reading]);
    const exit = stack.edge.stop('SIGTERM');
    expect(await reading).toBe('Echo: one two three four five six');
    const code = await exit;
    if (code !== 0) console.log(stack.edge.output().slice(-3000));
    expect(code).toBe(0);

    const jobs = new UsageJobs(stack.redisUrl, stack.prefix);
    try {
      expect(await jobs.find(response.headers.get('x-request-id')!)).toMatchObject({
        status: 200,
        stream: true,
        errorCode: null,
      });
    } finally {
      await jobs.close();
    }
  });
});
