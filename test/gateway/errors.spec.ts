import OpenAI from 'openai';
import { Events } from '@switchyard/contracts';
import { query } from '@switchyard/testing';
import { freshAccount, Stack, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// Every failure of the public API in OpenAI's error shape, with its status and code
// (docs/specification.md, "Errors"). Bad input never yields a 500.

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

describe('gateway: errors', () => {
  const stack = new Stack({
    edgeEnv: { MAX_BODY_BYTES: '65536', UPSTREAM_FIRST_BYTE_TIMEOUT_MS: '500' },
  });
  let model: string;
  let token: { key: string };

  beforeAll(async () => {
    await stack.start();
    model = uniqueName('m');
    await stack.createChannel({ models: [model], keys: [await freshAccount(stack)] });
    token = await stack.createToken();
    await stack.routable(token.key, model);
  }, STACK_START_TIMEOUT_MS);

  afterAll(() => stack.stop());

  async function call(
    body: unknown,
    key = token.key,
    init: RequestInit = {},
  ): Promise<{ status: number; body: ErrorBody }> {
    const response = await fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      body:
        typeof body === 'string' || body instanceof ReadableStream ? body : JSON.stringify(body),
      ...init,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        ...(init.headers as Record<string, string>),
      },
    });
    return { status: response.status, body: (await response.json()) as ErrorBody };
  }

  const chat = (m = model) => ({ model: m, messages: [{ role: 'user', content: 'hi' }] });

  function expectError(
    result: { status: number; body: ErrorBody },
    status: number,
    code: string,
  ): void {
    expect(result.status).toBe(status);
    expect(Object.keys(result.body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(result.body.error.code).toBe(code);
    expect(typeof result.body.error.type).toBe('string');
    expect(result.body.error.message.length).toBeGreaterThan(10);
  }

  it('401 for a missing, malformed or foreign token', async () => {
    const missing = await fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify(chat()),
    });
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as ErrorBody).error.code).toBe('invalid_api_key');
    expectError(await call(chat(), 'sk-issued-by-someone-else-0000'), 401, 'invalid_api_key');
    await expect(
      stack.client('sk-not-ours-1234').chat.completions.create(chat() as never),
    ).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('401 for a disabled or expired token', async () => {
    const disabled = await stack.createToken({ status: 'disabled' });
    expectError(await call(chat(), disabled.key), 401, 'token_disabled');
    const expired = await stack.createToken({ expiresAt: new Date(Date.now() - 1_000) });
    expectError(await call(chat(), expired.key), 401, 'token_expired');
  });

  it('429 insufficient_quota for an exhausted token, and a limited token with quota left is served', async () => {
    const exhausted = await stack.createToken({ quota: 1_000, usedQuota: 1_000 });
    expectError(await call(chat(), exhausted.key), 429, 'insufficient_quota');
    const marked = await stack.createToken({ status: 'exhausted' });
    expectError(await call(chat(), marked.key), 429, 'insufficient_quota');
    const left = await stack.createToken({ quota: 1_000, usedQuota: 10 });
    expect((await call(chat(), left.key)).status).toBe(200);
  });

  it('403 when the token may not use the model, or not from this address', async () => {
    const narrow = await stack.createToken({ models: ['other-model'] });
    const refused = await call(chat(), narrow.key);
    expectError(refused, 403, 'model_not_allowed');
    expect(refused.body.error.param).toBe('model');
    const elsewhere = await stack.createToken({ allowIps: ['203.0.113.0/24'] });
    expectError(await call(chat(), elsewhere.key), 403, 'ip_not_allowed');
    const here = await stack.createToken({ allowIps: ['127.0.0.0/8', '::1/128'] });
    expect((await call(chat(), here.key)).status).toBe(200);
  });

  it('believes X-Forwarded-For only from a trusted proxy (loopback by default)', async () => {
    const office = await stack.createToken({ allowIps: ['198.51.100.7/32'] });
    // The test runs on loopback, a trusted proxy: the forwarded client address is used.
    expect(
      (await call(chat(), office.key, { headers: { 'x-forwarded-for': '198.51.100.7' } })).status,
    ).toBe(200);
    expectError(
      await call(chat(), office.key, { headers: { 'x-forwarded-for': '192.0.2.1' } }),
      403,
      'ip_not_allowed',
    );
  });

  it('429 rate_limit_exceeded past the token request rate', async () => {
    const slow = await stack.createToken({ rateLimit: 2 });
    expect((await call(chat(), slow.key)).status).toBe(200);
    expect((await call(chat(), slow.key)).status).toBe(200);
    expectError(await call(chat(), slow.key), 429, 'rate_limit_exceeded');
  });

  it('400 for bad JSON, wrong types and missing fields, naming the parameter', async () => {
    expectError(await call('{"model": '), 400, 'invalid_json');
    expectError(await call(''), 400, 'invalid_json');
    expectError(await call('[1,2]'), 400, 'invalid_request');
    const noModel = await call({ messages: [{ role: 'user', content: 'x' }] });
    expectError(noModel, 400, 'invalid_request');
    expect(noModel.body.error.param).toBe('model');
    expect((await call({ model, messages: 'hi' })).body.error.param).toBe('messages');
    expect(
      (await call({ model, messages: [{ role: 'user', content: 42 }] })).body.error.param,
    ).toBe('messages[0].content');
    expect((await call({ model, messages: [{ content: 'x' }] })).body.error.param).toBe(
      'messages[0].role',
    );
    expect((await call({ ...chat(), stream: 'yes' })).body.error.param).toBe('stream');
  });

  it('413 for an oversized body', async () => {
    const huge = { model, messages: [{ role: 'user', content: 'x'.repeat(70_000) }] };
    expectError(await call(huge), 413, 'request_too_large');
  });

  // Refused by its Content-Length before it is read, while the client still uploads: the
  // edge reads the rest (within a bound) so that Node's fetch, under both SDKs, gets the
  // 413 instead of "fetch failed" (docs/reliability.md, "Defects of the edges of the
  // services").
  it('413 that Node fetch reads for a body far over the limit', async () => {
    const huge = JSON.stringify({
      model,
      messages: [{ role: 'user', content: 'x'.repeat(6 * 1024 * 1024) }],
    });
    expectError(await call(huge), 413, 'request_too_large');
    // Sent without a length (chunked), it is refused while it is read.
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        const piece = new TextEncoder().encode('x'.repeat(256 * 1024));
        controller.enqueue(
          new TextEncoder().encode(`{"model":"${model}","messages":[{"role":"user","content":"`),
        );
        for (let i = 0; i < 24; i += 1) controller.enqueue(piece);
        controller.enqueue(new TextEncoder().encode('"}]}'));
        controller.close();
      },
    });
    expectError(await call(chunked, token.key, { duplex: 'half' }), 413, 'request_too_large');
  });

  it('413 the openai SDK reports as such for a body far over the limit', async () => {
    const client = stack.client(token.key);
    const error = await client.chat.completions
      .create({ model, messages: [{ role: 'user', content: 'x'.repeat(6 * 1024 * 1024) }] })
      .then(
        () => undefined,
        (failure: unknown) => failure,
      );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('request_too_large');
  });

  it('404 in OpenAI shape for unknown routes and methods', async () => {
    for (const [method, path] of [
      ['POST', '/v1/chat/complete'],
      ['GET', '/v1/chat/completions'],
      ['DELETE', '/v1/models'],
    ] as const) {
      const response = await fetch(`${stack.edge.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token.key}` },
      });
      expect(response.status).toBe(404);
      expect(((await response.json()) as ErrorBody).error.code).toBe('unknown_url');
    }
  });

  it('400 invalid_request in the front API’s shape for a URL that does not decode', async () => {
    const openai = await fetch(`${stack.edge.url}/v1/chat/%zz`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.key}` },
    });
    expect(openai.status).toBe(400);
    const body = (await openai.json()) as ErrorBody;
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toContain('does not decode');
    // Anthropic's clients read their own shape on /v1/messages.
    const anthropic = await fetch(`${stack.edge.url}/v1/messages/%E0%A4%A`, { method: 'POST' });
    expect(anthropic.status).toBe(400);
    expect(await anthropic.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error' },
    });
    // Gemini's, whose model is a part of the path.
    const gemini = await fetch(`${stack.edge.url}/v1beta/models/%E0%A4%A:generateContent`, {
      method: 'POST',
    });
    expect(gemini.status).toBe(400);
    expect(await gemini.json()).toMatchObject({
      error: { code: 400, status: 'INVALID_ARGUMENT' },
    });
  });

  it('404 model_not_found naming the model and the group for a model no channel serves', async () => {
    const result = await call(chat('model-nobody-serves'));
    expectError(result, 404, 'model_not_found');
    expect(result.body.error.type).toBe('invalid_request_error');
    expect(result.body.error.param).toBe('model');
    expect(result.body.error.message).toContain('model-nobody-serves');
    expect(result.body.error.message).toContain('default');
  });

  it('503 no_available_channel for a model whose only channel rests (disabled automatically)', async () => {
    const resting = uniqueName('m');
    const { id } = await stack.createChannel({
      models: [resting],
      keys: [await freshAccount(stack)],
    });
    await query(
      stack.databaseUrl,
      `UPDATE "Channel" SET status = 'auto_disabled', "updatedAt" = now() WHERE id = $1`,
      [id],
    );
    await stack.publish(Events.ChannelChanged, { channelId: id, action: 'updated' });
    await stack.routingSettled(id, false);
    const result = await call(chat(resting));
    expectError(result, 503, 'no_available_channel');
    expect(result.body.error.message).toContain(resting);
  });

  it('502 when every upstream fails, 504 when none answers in time', async () => {
    const failing = uniqueName('m');
    const broken = await freshAccount(stack);
    await stack.createChannel({ models: [failing], keys: [broken] });
    await stack.routable(token.key, failing);
    await stack.mockFault({ key: broken, status: 500, times: 1 });
    expectError(await call(chat(failing)), 502, 'upstream_error');

    const slow = uniqueName('m');
    const hanging = await freshAccount(stack);
    await stack.createChannel({ models: [slow], keys: [hanging] });
    await stack.routable(token.key, slow);
    await stack.mockFault({ key: hanging, hang: true, times: 1 });
    expectError(await call(chat(slow)), 504, 'upstream_timeout');
  });

  it("passes an upstream's own client error through (not retried)", async () => {
    const picky = uniqueName('m');
    const account = await freshAccount(stack);
    await stack.createChannel({ models: [picky], keys: [account] });
    await stack.routable(token.key, picky);
    await stack.mockFault({ key: account, status: 400, times: 1 });
    const result = await call(chat(picky));
    expect(result.status).toBe(400);
    expect(result.body.error.code).toBe('invalid_request');
    expect((await stack.mockStats(account)).requests).toBe(1);
  });
});
