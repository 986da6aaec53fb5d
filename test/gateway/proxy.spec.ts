import { Agent, request as httpRequest } from 'node:http';
import OpenAI from 'openai';
import { waitFor } from '@switchyard/testing';
import { freshAccount, Stack, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// The OpenAI-compatible surface through the real edge, router and a mock provider, with
// the official SDK as the client.

describe('gateway: the OpenAI-compatible API', () => {
  const stack = new Stack();
  let account: string;
  let model: string;
  let token: { key: string };

  beforeAll(async () => {
    await stack.start();
    account = await freshAccount(stack);
    model = uniqueName('gpt-4o');
    await stack.createChannel({
      models: [model, 'gizmo-*', '*-all'],
      keys: [account],
      modelMapping: { 'alias-model': 'gpt-4o-mini' },
    });
    await stack.createChannel({
      models: ['alias-model'],
      keys: [account],
      modelMapping: { 'alias-model': 'gpt-4o-mini' },
    });
    token = await stack.createToken();
    await stack.routable(token.key, model);
  }, STACK_START_TIMEOUT_MS);

  afterAll(() => stack.stop());

  it('answers a chat completion with usage, and forwards the body as sent', async () => {
    const completion = await stack.client(token.key).chat.completions.create({
      model,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'hello gateway' }] },
      ],
      temperature: 0.3,
      // An unknown field must reach the upstream untouched.
      ...({ vendor_extension: { keep: true } } as object),
    });
    expect(completion.choices[0]?.message.content).toBe('Echo: hello gateway');
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);

    const received = (await stack.mockRequests(account)).at(-1)!;
    expect(received.path).toBe('/v1/chat/completions');
    expect(received.body).toMatchObject({
      model,
      temperature: 0.3,
      vendor_extension: { keep: true },
    });
    expect(received.headers['x-request-id']).toBeDefined();
  });

  it('streams chunk by chunk and passes the usage chunk when include_usage is set', async () => {
    const stream = await stack.client(token.key).chat.completions.create({
      model,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    let text = '';
    let chunks = 0;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      chunks += 1;
      text += chunk.choices[0]?.delta.content ?? '';
      usage ??= chunk.usage;
    }
    expect(text).toBe('Echo: one two three four');
    expect(chunks).toBeGreaterThan(4);
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('passes tools and legacy functions through, with the tool call the model made', async () => {
    const tools = await stack.client(token.key).chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'weather in Paris?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather for a city',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string' } },
              required: ['city'],
            },
          },
        },
      ],
      tool_choice: 'auto',
    });
    const call = tools.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');

    const legacy = await stack.client(token.key).chat.completions.create({
      model,
      messages: [{ role: 'user', content: 'weather?' }],
      functions: [
        {
          name: 'lookup',
          parameters: { type: 'object', properties: { q: { type: 'string', enum: ['a'] } } },
        },
      ],
      function_call: 'auto',
    });
    expect(legacy.choices[0]?.message.function_call).toEqual({
      name: 'lookup',
      arguments: '{"q":"a"}',
    });
    const received = (await stack.mockRequests(account)).at(-1)!;
    expect(received.body.functions).toEqual([
      {
        name: 'lookup',
        parameters: { type: 'object', properties: { q: { type: 'string', enum: ['a'] } } },
      },
    ]);
  });

  it('renames the model for a channel that maps it, and only then', async () => {
    await stack.routable(token.key, 'alias-model');
    await stack.client(token.key).chat.completions.create({
      model: 'alias-model',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect((await stack.mockRequests(account)).at(-1)!.body.model).toBe('gpt-4o-mini');
  });

  it('serves custom-assistant and reverse-engineered names through wildcard entries', async () => {
    const gizmo = await stack.client(token.key).chat.completions.create({
      model: 'gizmo-g-abc123',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(gizmo.model).toBe('gizmo-g-abc123');
    const all = await stack
      .client(token.key)
      .chat.completions.create({ model: 'gpt-4o-all', messages: [{ role: 'user', content: 'x' }] });
    expect(all.object).toBe('chat.completion');
  });

  it("returns the upstream's resolved model name", async () => {
    await stack.mockFault({ key: account, resolvedModel: `${model}-2024-08-06`, times: 1 });
    const completion = await stack
      .client(token.key)
      .chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] });
    expect(completion.model).toBe(`${model}-2024-08-06`);
  });

  it('serves embeddings and image generations', async () => {
    const embeddings = await stack
      .client(token.key)
      .embeddings.create({ model, input: ['a', 'b'] });
    expect(embeddings.data).toHaveLength(2);
    expect(embeddings.data[0]!.embedding.length).toBeGreaterThan(0);
    const images = await stack
      .client(token.key)
      .images.generate({ model, prompt: 'a lighthouse', n: 1 });
    // The mock draws a real PNG and serves it itself.
    const url = images.data?.[0]?.url ?? '';
    expect(url).toMatch(/\/media\/images\/[0-9a-f]+\.png$/);
    const drawing = await fetch(url);
    expect(drawing.headers.get('content-type')).toBe('image/png');
    expect(
      Buffer.from(await drawing.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
  });

  it('lists only models this token may use and some channel serves', async () => {
    const limited = await stack.createToken({ models: [model] });
    const all = (await stack.client(token.key).models.list()).data.map((m) => m.id);
    expect(all).toEqual(expect.arrayContaining([model, 'alias-model']));
    expect(all).not.toContain('gizmo-*');
    expect((await stack.client(limited.key).models.list()).data.map((m) => m.id)).toEqual([model]);
  });

  it('knows each request of one keep-alive connection by its own token', async () => {
    // A connection's token is hashed once, not once a request: a connection that changes
    // tokens (a proxy's, shared by its clients) must never be taken for the last one's.
    // Another token, for another model only: taken for the first, it would be answered.
    const other = await stack.createToken({ models: ['some-other-model'] });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const ask = (key: string) =>
      new Promise<{ status: number; port: number; body: string }>((resolve, reject) => {
        const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] });
        const sent = httpRequest(
          `${stack.edge.url}/v1/chat/completions`,
          {
            method: 'POST',
            agent,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          },
          (response) => {
            // Read now: once the answer has ended, the socket goes back to the agent.
            const port = response.socket.localPort!;
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('end', () => resolve({ status: response.statusCode!, port, body: text }));
          },
        );
        sent.on('error', reject);
        sent.end(body);
      });
    try {
      const answers = [
        await ask(token.key),
        await ask(`${token.key.slice(0, -1)}x`),
        await ask(token.key),
        await ask(other.key),
        await ask('sk-not-issued-here'),
      ];
      expect(answers.map((a) => a.status)).toEqual([200, 401, 200, 403, 401]);
      expect(JSON.parse(answers[1]!.body)).toMatchObject({ error: { code: 'invalid_api_key' } });
      expect(JSON.parse(answers[3]!.body)).toMatchObject({ error: { code: 'model_not_allowed' } });
      // One connection throughout: each answer came on the first one's socket.
      expect(new Set(answers.map((a) => a.port)).size).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it('answers every response with an x-request-id', async () => {
    const ok = await fetch(`${stack.edge.url}/v1/models`, {
      headers: { authorization: `Bearer ${token.key}` },
    });
    const missing = await fetch(`${stack.edge.url}/nowhere`);
    expect(ok.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(missing.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('counts forwarded answers, whole and streamed, in the HTTP metrics by route and status', async () => {
    const answered = async (status: number): Promise<number> => {
      const page = await (await fetch(`${stack.edge.opsUrl}/metrics`)).text();
      const line = page
        .split('\n')
        .find(
          (l) =>
            l.startsWith('http_requests_total{') &&
            l.includes('route="/v1/chat/completions"') &&
            l.includes(`status="${status}"`),
        );
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    };
    const [okBefore, refusedBefore] = [await answered(200), await answered(400)];
    const ask = (body: object | string) =>
      fetch(`${stack.edge.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.key}`, 'content-type': 'application/json' },
        body:
          typeof body === 'string'
            ? body
            : JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...body }),
      });
    const whole = await ask({});
    const text = await whole.text();
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('application/json');
    expect(whole.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(whole.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(whole.headers.get('x-switchyard-model')).toBe(model);
    const streamed = await ask({ stream: true });
    expect(await streamed.text()).toContain('data: [DONE]');
    expect((await ask('{"model":')).status).toBe(400);
    // The edge records an answer once its response has finished: the scrape may come first.
    await waitFor(
      async () =>
        (await answered(200)) === okBefore + 2 && (await answered(400)) === refusedBefore + 1
          ? true
          : undefined,
      { timeoutMs: 5_000, what: 'the answers counted' },
    );
  });

  it('serves /metrics on its operations port only, never on the public one', async () => {
    // The dashboard's single-page app may answer the path with its page, never the metrics.
    const open = await fetch(`${stack.edge.url}/metrics`);
    expect(open.headers.get('content-type')).not.toMatch(/^text\/plain/);
    const page = await open.text();
    expect(page).not.toContain('nodejs_version_info');
    expect(page).not.toContain('http_requests_total');
    // The probes stay where the Kubernetes manifests point them.
    expect((await fetch(`${stack.edge.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${stack.edge.url}/readyz`)).status).toBe(200);
    const scrape = await fetch(`${stack.edge.opsUrl}/metrics`);
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toContain('http_requests_total');
    expect((await fetch(`${stack.edge.opsUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${stack.edge.opsUrl}/v1/models`)).status).toBe(404);
  });
});
