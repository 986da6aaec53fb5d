import { randomBytes } from 'node:crypto';
import { query, waitFor } from '@switchyard/testing';
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { silentWav } from '../support/audio.js';
import { freshAccount, Stack, STACK_START_TIMEOUT_MS, uniqueName } from '../support/stack.js';

// Fallbacks across models (docs/routing.md, "Fallbacks across models"): when every channel
// of a model fails before the first byte, the next model of its list serves, said in
// `x-switchyard-model` and in the usage row (both names, the served model's price); an
// upstream's context-window refusal takes that error's own list; a stream is never retried
// after its first byte; the admin API refuses lists that loop or name unknown models; and
// a chain that fails whole answers in OpenAI's error shape.

const CONTEXT_ERROR = JSON.stringify({
  error: {
    message:
      "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
    type: 'invalid_request_error',
    param: 'messages',
    code: 'context_length_exceeded',
  },
});

interface UsageRow {
  model: string;
  requestedModel: string | null;
  upstreamModel: string | null;
  promptTokens: number;
  completionTokens: number;
  cost: string;
  status: number;
  attempts: number;
}

describe('gateway: fallbacks across models', () => {
  const first = { username: 'owner', password: `first-${randomBytes(6).toString('hex')}` };
  const stack = new Stack({ admin: first, metering: true });
  let owner = '';

  async function api<T>(
    method: string,
    route: string,
    body?: unknown,
    session = owner,
  ): Promise<{ status: number; body: T }> {
    const response = await fetch(`${stack.edge.url}/api${route}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(session ? { authorization: `Bearer ${session}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as T };
  }

  async function signIn(username: string, initial: string): Promise<string> {
    const login = await api<{ token: string }>(
      'POST',
      '/auth/login',
      { username, password: initial },
      '',
    );
    const password = `changed-${randomBytes(6).toString('hex')}`;
    await api(
      'POST',
      '/auth/password',
      { currentPassword: initial, newPassword: password },
      login.body.token,
    );
    return (await api<{ token: string }>('POST', '/auth/login', { username, password }, '')).body
      .token;
  }

  /** A model served by one channel of a fresh mock account. */
  async function served(prefix: string): Promise<{ model: string; account: string }> {
    const model = uniqueName(prefix);
    const account = await freshAccount(stack);
    await stack.createChannel({ models: [model], keys: [account] });
    return { model, account };
  }

  async function setFallbacks(model: string, lists: Record<string, string[]>): Promise<void> {
    const answer = await api('PUT', `/model-fallbacks/${encodeURIComponent(model)}`, lists);
    expect(answer.status).toBe(200);
  }

  async function chat(
    key: string,
    model: string,
    extra: Record<string, unknown> = {},
  ): Promise<Response> {
    return fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        max_tokens: 16,
        messages: [{ role: 'user', content: 'fall back' }],
        ...extra,
      }),
    });
  }

  /** Asks until the edge has read the lists (their event arrives on its own time). */
  async function servedBy(key: string, model: string, expected: string): Promise<Response> {
    return waitFor(
      async () => {
        const response = await chat(key, model);
        await response.clone().arrayBuffer();
        return response.headers.get('x-switchyard-model') === expected ? response : undefined;
      },
      { what: `${model} served by ${expected}` },
    );
  }

  const usageRow = (requestId: string) =>
    waitFor(
      async () =>
        (
          await query<UsageRow>(
            stack.databaseUrl,
            `SELECT model, "requestedModel", "upstreamModel", "promptTokens", "completionTokens",
                    cost::text AS cost, status, attempts
               FROM "UsageLog" WHERE "requestId" = $1`,
            [requestId],
          )
        )[0],
      { what: `usage row ${requestId}` },
    );

  async function heldOn(account: string): Promise<number> {
    const redis = new Redis(stack.redisUrl);
    try {
      return Number((await redis.hget(`${stack.prefix}:spend:{${account}}:h`, '#held')) ?? 0);
    } finally {
      redis.disconnect();
    }
  }

  beforeAll(async () => {
    await stack.start();
    owner = await signIn(first.username, first.password);
  }, STACK_START_TIMEOUT_MS);

  afterAll(() => stack.stop());

  it('serves the next model when every channel of the first fails, says which, and bills it at its price with both names', async () => {
    const primary = await served('primary');
    const second = await served('second');
    const prices = await api('PUT', '/prices', {
      items: [
        { model: primary.model, inputPrice: 1_000_000, outputPrice: 1_000_000 },
        { model: second.model, inputPrice: 7_000_000, outputPrice: 9_000_000 },
      ],
    });
    expect(prices.status).toBe(200);
    const token = await stack.createToken({ quota: 50_000_000 });
    await stack.routable(token.key, primary.model);
    await stack.routable(token.key, second.model);
    await stack.mockFault({ key: primary.account, status: 500 });
    await setFallbacks(primary.model, { fallbacks: [second.model] });

    const response = await servedBy(token.key, primary.model, second.model);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe('Echo: fall back');
    // The fallback's channel was asked for the fallback model, not the one requested.
    const sent = await stack.mockRequests(second.account);
    expect(sent.at(-1)?.body.model).toBe(second.model);

    const row = await usageRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ model: second.model, requestedModel: primary.model, status: 200 });
    expect(row.attempts).toBeGreaterThanOrEqual(2);
    expect(Number(row.cost)).toBe(row.promptTokens * 7 + row.completionTokens * 9);
    // One hold for the request, taken again at the dearer price and settled: none is left.
    await waitFor(async () => ((await heldOn(`token:${token.id}`)) === 0 ? true : undefined), {
      what: 'the hold settled',
    });
  });

  it('falls back for a Gemini generateContent caller too, whose model is in the URL', async () => {
    const primary = await served('gem-primary');
    const second = await served('gem-second');
    const token = await stack.createToken();
    await stack.routable(token.key, primary.model);
    await stack.routable(token.key, second.model);
    await stack.mockFault({ key: primary.account, status: 500 });
    await setFallbacks(primary.model, { fallbacks: [second.model] });
    const gemini = (method: string, query = '') =>
      fetch(`${stack.edge.url}/v1beta/models/${primary.model}:${method}${query}`, {
        method: 'POST',
        headers: { 'x-goog-api-key': token.key, 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'fall back' }] }] }),
      });

    const whole = await waitFor(
      async () => {
        const response = await gemini('generateContent');
        await response.clone().arrayBuffer();
        return response.headers.get('x-switchyard-model') === second.model ? response : undefined;
      },
      { what: `${primary.model} served by ${second.model}` },
    );
    expect(whole.status).toBe(200);
    const body = (await whole.json()) as {
      candidates: { content: { parts: { text: string }[] } }[];
    };
    expect(body.candidates[0]?.content.parts[0]?.text).toBe('Echo: fall back');
    expect((await stack.mockRequests(second.account)).at(-1)?.body.model).toBe(second.model);
    const row = await usageRow(whole.headers.get('x-request-id')!);
    expect(row).toMatchObject({ model: second.model, requestedModel: primary.model, status: 200 });

    // A stream keeps the framing its caller asked for on the fallback.
    const streamed = await gemini('streamGenerateContent', '?alt=sse');
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('x-switchyard-model')).toBe(second.model);
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await streamed.text())
      .split(/\r?\n\r?\n/)
      .filter((block) => block.startsWith('data: '))
      .map((block) => JSON.parse(block.slice(6)) as { candidates?: unknown[] });
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((event) => Array.isArray(event.candidates))).toBe(true);
  });

  it('falls back for an audio transcription, renaming the model in its form', async () => {
    const primary = await served('whisper-primary');
    const second = await served('whisper-second');
    const token = await stack.createToken();
    await stack.routable(token.key, primary.model);
    await stack.routable(token.key, second.model);
    await stack.mockFault({ key: primary.account, status: 503 });
    await setFallbacks(primary.model, { fallbacks: [second.model] });
    const audio = silentWav(1);
    const transcribe = () => {
      const form = new FormData();
      form.set('model', primary.model);
      form.set('file', new Blob([audio], { type: 'audio/wav' }), 'fallback.wav');
      return fetch(`${stack.edge.url}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.key}` },
        body: form,
      });
    };

    const response = await waitFor(
      async () => {
        const answer = await transcribe();
        await answer.clone().arrayBuffer();
        return answer.headers.get('x-switchyard-model') === second.model ? answer : undefined;
      },
      { what: `${primary.model} transcribed by ${second.model}` },
    );
    expect(response.status).toBe(200);
    expect(((await response.json()) as { text: string }).text).toContain('fallback.wav');
    const sent = (await stack.mockRequests(second.account)).at(-1)?.body as {
      model?: string;
      file?: { name: string; size: number };
    };
    expect(sent.model).toBe(second.model);
    expect(sent.file).toMatchObject({ name: 'fallback.wav', size: audio.length });
    const row = await usageRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ model: second.model, requestedModel: primary.model, status: 200 });
  });

  it('holds a dearer fallback at its own price, once, and leaves no hold behind', async () => {
    const cheap = await served('cheap');
    const dear = await served('dear');
    await api('PUT', '/prices', {
      items: [
        { model: cheap.model, inputPrice: 1_000_000, outputPrice: 1_000_000 },
        { model: dear.model, inputPrice: 100_000_000, outputPrice: 100_000_000 },
      ],
    });
    const token = await stack.createToken({ quota: 50_000_000 });
    const account = `token:${token.id}`;
    await stack.routable(token.key, cheap.model);
    await stack.routable(token.key, dear.model);
    await stack.mockFault({ key: cheap.account, status: 500 });
    // The dear model answers slowly, so its hold can be read while the request is in flight.
    await stack.mockFault({ key: dear.account, latencyMs: 1_500 });
    await setFallbacks(cheap.model, { fallbacks: [dear.model] });
    // Its worst case (docs/architecture.md, "Spend holds"): every byte of its body a prompt
    // token, plus its output limit, at the dear price; the body is the one sent for it.
    const sentBody = JSON.stringify({
      model: dear.model,
      max_tokens: 16,
      messages: [{ role: 'user', content: 'fall back' }],
    });
    const dearWorstCase = Buffer.byteLength(sentBody) * 100 + 16 * 100;

    await waitFor(
      async () => {
        await waitFor(async () => ((await heldOn(account)) === 0 ? true : undefined), {
          what: 'no hold before the request',
        });
        const pending = chat(token.key, cheap.model);
        let held = 0;
        for (let i = 0; i < 40 && held === 0; i += 1) {
          await new Promise((resolve) => setTimeout(resolve, 25));
          held = await heldOn(account);
        }
        const response = await pending;
        await response.arrayBuffer();
        // Until the edge has read the lists and prices, the cheap model's failure or its
        // own worst case shows: asked again.
        return response.headers.get('x-switchyard-model') === dear.model && held === dearWorstCase
          ? true
          : undefined;
      },
      { what: 'the fallback held at its own price' },
    );
    await waitFor(async () => ((await heldOn(account)) === 0 ? true : undefined), {
      what: 'the hold settled',
    });
  });

  it('takes the context-window list when the upstream says the request is too long', async () => {
    const small = await served('small');
    const general = await served('general');
    const large = await served('large');
    const token = await stack.createToken();
    for (const model of [small, general, large]) await stack.routable(token.key, model.model);
    await stack.mockFault({ key: small.account, status: 400, body: CONTEXT_ERROR });
    await setFallbacks(small.model, { fallbacks: [general.model], contextWindow: [large.model] });

    const response = await servedBy(token.key, small.model, large.model);
    expect(response.status).toBe(200);
    expect((await stack.mockStats(general.account)).requests).toBe(0);
    const row = await usageRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ model: large.model, requestedModel: small.model });
  });

  it('never retries a stream once its first byte went out', async () => {
    const streamed = await served('streamed');
    const spare = await served('spare');
    const token = await stack.createToken();
    await stack.routable(token.key, streamed.model);
    await stack.routable(token.key, spare.model);
    await setFallbacks(streamed.model, { fallbacks: [spare.model] });
    // The lists are read: the spare serves while the first model's channel fails at once.
    // The fault is armed for each try, as a try made before the edge has the lists uses it up.
    await waitFor(
      async () => {
        await stack.mockFault({ key: streamed.account, status: 500, times: 1 });
        const response = await chat(token.key, streamed.model);
        await response.arrayBuffer();
        return response.headers.get('x-switchyard-model') === spare.model ? true : undefined;
      },
      { what: `${streamed.model} served by ${spare.model}` },
    );
    const spareRequests = (await stack.mockStats(spare.account)).requests;

    await stack.mockFault({ key: streamed.account, disconnectAfterChunks: 2, times: 1 });
    const { data: stream, response } = await stack
      .client(token.key)
      .chat.completions.create({
        model: streamed.model,
        stream: true,
        messages: [{ role: 'user', content: 'a reply long enough to be cut' }],
      })
      .withResponse();
    expect(response.headers.get('x-switchyard-model')).toBe(streamed.model);
    const failure = await (async () => {
      for await (const chunk of stream) void chunk;
    })().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((await stack.mockStats(spare.account)).requests).toBe(spareRequests);
    const row = await usageRow(response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ model: streamed.model, requestedModel: null });
  });

  it('answers in OpenAI’s error shape, naming the chain, when every model fails', async () => {
    const p = await served('p');
    const q = await served('q');
    const token = await stack.createToken();
    await stack.routable(token.key, p.model);
    await stack.routable(token.key, q.model);
    await stack.mockFault({ key: p.account, status: 500 });
    await stack.mockFault({ key: q.account, status: 500 });
    await setFallbacks(p.model, { fallbacks: [q.model] });

    const failed = await waitFor(
      async () => {
        const response = await chat(token.key, p.model);
        const body = (await response.json()) as { error: Record<string, unknown> };
        return String(body.error?.message).includes(q.model) ? { response, body } : undefined;
      },
      { what: 'the chain failure' },
    );
    expect(failed.response.status).toBe(502);
    expect(failed.body.error).toMatchObject({
      type: 'upstream_error',
      code: 'upstream_error',
      param: null,
    });
    expect(failed.body.error.message).toContain(`\`${p.model}\` → \`${q.model}\``);
    const row = await usageRow(failed.response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ model: p.model, requestedModel: null, status: 502 });
  });

  it('refuses lists that loop, name the model itself or a model no channel serves', async () => {
    const a = await served('loop-a');
    const b = await served('loop-b');
    const c = await served('loop-c');
    await setFallbacks(a.model, { fallbacks: [b.model] });
    await setFallbacks(b.model, { fallbacks: [c.model] });

    const refusals = [
      [c.model, { fallbacks: [a.model] }, 'fallbacks[0]', /loops back/],
      [c.model, { fallbacks: [], contextWindow: [b.model] }, 'contextWindow[0]', /loops back/],
      [a.model, { fallbacks: [a.model] }, 'fallbacks[0]', /itself/],
      [a.model, { fallbacks: [b.model, b.model] }, 'fallbacks[1]', /repeats/],
      [a.model, { fallbacks: ['no-such-model-anywhere'] }, 'fallbacks[0]', /no channel serves/],
      ['no-such-model-anywhere', { fallbacks: [a.model] }, 'model', /no channel serves/],
      [a.model, { fallbacks: ['not a name'] }, 'fallbacks', /model/],
    ] as const;
    for (const [model, lists, field, message] of refusals) {
      const answer = await api<{
        error: { code: string; fields: { field: string; message: string }[] };
      }>('PUT', `/model-fallbacks/${encodeURIComponent(model)}`, lists);
      expect({ model, status: answer.status, code: answer.body.error.code }).toEqual({
        model,
        status: 400,
        code: 'validation_failed',
      });
      expect(answer.body.error.fields[0]?.field).toBe(field);
      expect(answer.body.error.fields[0]?.message).toMatch(message);
    }

    // Reading needs a session; the lists stayed as they were, and every change is audited.
    expect((await api('GET', '/model-fallbacks', undefined, '')).status).toBe(401);
    const list = await api<{ items: { model: string; fallbacks: string[] }[] }>(
      'GET',
      '/model-fallbacks?pageSize=100',
    );
    expect(list.body.items.find((item) => item.model === a.model)?.fallbacks).toEqual([b.model]);
    const audit = await api<{ items: { action: string; targetId: string }[] }>(
      'GET',
      `/audit?targetType=model_fallback&targetId=${encodeURIComponent(a.model)}`,
    );
    expect(audit.body.items.map((item) => item.action)).toEqual(['model_fallback.update']);
    expect((await api('DELETE', `/model-fallbacks/${encodeURIComponent(c.model)}`)).status).toBe(
      404,
    );
    expect((await api('DELETE', `/model-fallbacks/${encodeURIComponent(b.model)}`)).status).toBe(
      204,
    );
  });
});
