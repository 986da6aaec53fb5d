import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, MockUpstreamEnv } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { createService } from '@switchyard/service';
import OpenAI from 'openai';
import request from 'supertest';
import { MockUpstreamModule } from './app.module.js';

// The mock as a client sees it: the official OpenAI SDK against the real HTTP server.

describe('mock-upstream', () => {
  let app: NestFastifyApplication;
  let baseURL: string;
  const client = (apiKey = 'sk-mock-a', options: { timeout?: number } = {}) =>
    new OpenAI({ apiKey, baseURL, maxRetries: 0, ...options });

  beforeAll(async () => {
    const env = loadEnvironment(MockUpstreamEnv, {
      MOCK_ACCOUNTS: 'sk-mock-a,sk-mock-limited:2:0,sk-mock-banned:0:0:banned',
    });
    app = await createService(
      {
        name: 'mock-upstream',
        environment: MockUpstreamEnv,
        module: (env) => MockUpstreamModule.forRoot(env),
        port: () => 0,
      },
      env,
      createLogger({ service: 'mock-upstream', level: 'silent' }),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    baseURL = `${await app.getUrl()}/v1`.replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app.close();
  });

  afterEach(async () => {
    await request(app.getHttpServer()).post('/_mock/reset').expect(204);
  });

  it('answers a chat completion in OpenAI format with usage', async () => {
    const completion = await client().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.content).toBe('Echo: hello there');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.total_tokens).toBe(
      (completion.usage?.prompt_tokens ?? 0) + (completion.usage?.completion_tokens ?? 0),
    );
  });

  it('streams chunks ending with a usage chunk when include_usage is set', async () => {
    const stream = await client().chat.completions.create({
      model: 'gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'one two three' }],
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let chunks = 0;
    for await (const chunk of stream) {
      chunks += 1;
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(chunks).toBeGreaterThan(3);
    expect(text).toBe('Echo: one two three');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('sends no usage chunk unless asked', async () => {
    const response = await request(app.getHttpServer())
      .post('/v1/chat/completions')
      .set('authorization', 'Bearer sk-mock-a')
      .send({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] })
      .expect(200);
    expect(response.text).not.toContain('"usage"');
    expect(response.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('calls the offered tool, and the legacy function', async () => {
    const tools = await client().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            parameters: {
              type: 'object',
              properties: { city: { type: 'string' } },
              required: ['city'],
            },
          },
        },
      ],
    });
    expect(tools.choices[0]?.finish_reason).toBe('tool_calls');
    const call = tools.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function.name).toBe('get_weather');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({
      city: 'example city',
    });

    const legacy = await client().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'weather?' }],
      functions: [{ name: 'get_weather', parameters: { type: 'object', properties: {} } }],
    });
    expect(legacy.choices[0]?.message.function_call?.name).toBe('get_weather');
  });

  it('serves embeddings, images and the model list', async () => {
    const embeddings = await client().embeddings.create({
      model: 'text-embedding-3-small',
      input: ['a', 'b'],
    });
    expect(embeddings.data).toHaveLength(2);
    expect(embeddings.data[0]?.embedding).toHaveLength(8);
    const again = await client().embeddings.create({ model: 'text-embedding-3-small', input: 'a' });
    expect(again.data[0]?.embedding).toEqual(embeddings.data[0]?.embedding);

    const images = await client().images.generate({ model: 'dall-e-3', prompt: 'a cat', n: 2 });
    expect(images.data).toHaveLength(2);
    expect(images.data?.[0]?.url).toMatch(/^http:\/\/127.0.0.1:\d+\/media\/images\//);

    const models = await client().models.list();
    expect(models.data.map((m) => m.id)).toContain('gpt-4o');
  });

  it('refuses unknown and banned keys with 401', async () => {
    await expect(
      client('sk-unknown').chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({
      status: 401,
      code: 'invalid_api_key',
    });
    await expect(
      client('sk-mock-banned').chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({
      status: 401,
      code: 'account_deactivated',
    });
  });

  it('quotes the whole key in the refusals of an account set to echo it, on every endpoint', async () => {
    const key = 'sk-mock-echo-0123456789abcdefghij';
    await request(app.getHttpServer())
      .put(`/_mock/accounts/${key}`)
      .send({ banned: true, echoKey: true })
      .expect(200);
    for (const [path, body] of [
      ['/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x' }] }],
      ['/v1/embeddings', { model: 'm', input: 'x' }],
      ['/v1/responses', { model: 'm', input: 'x' }],
    ] as const) {
      const refused = await request(app.getHttpServer())
        .post(path)
        .set('authorization', `Bearer ${key}`)
        .send(body)
        .expect(401);
      expect(refused.body.error).toMatchObject({ code: 'invalid_api_key' });
      expect(refused.body.error.message).toContain(`Incorrect API key provided: ${key}.`);
    }
  });

  it("enforces an account's requests per minute with 429 and Retry-After", async () => {
    const send = () =>
      request(app.getHttpServer())
        .post('/v1/chat/completions')
        .set('authorization', 'Bearer sk-mock-limited')
        .send({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
    await send().expect(200);
    await send().expect(200);
    const refused = await send().expect(429);
    expect(refused.body.error.code).toBe('rate_limit_exceeded');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    const stats = (await request(app.getHttpServer()).get('/_mock/accounts')).body as {
      key: string;
      rateLimited: number;
      maxRequestsPerWindow: number;
    }[];
    expect(stats.find((s) => s.key === 'sk-mock-limited')).toMatchObject({
      rateLimited: 1,
      maxRequestsPerWindow: 2,
    });
  });

  it('fails the number of requests a script asks for, for that key only', async () => {
    await request(app.getHttpServer())
      .post('/_mock/faults')
      .send({ key: 'sk-mock-a', status: 500, times: 1 })
      .expect(204);
    const body = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: 'x' }] };
    await expect(client().chat.completions.create(body)).rejects.toMatchObject({ status: 500 });
    await expect(client().chat.completions.create(body)).resolves.toMatchObject({
      object: 'chat.completion',
    });
  });

  it('answers exactly the bytes a script gives, with its status and content type', async () => {
    await request(app.getHttpServer())
      .post('/_mock/faults')
      .send({
        key: 'sk-mock-a',
        status: 502,
        body: '<html><body>Bad Gateway</body></html>',
        contentType: 'text/html',
        times: 1,
      })
      .expect(204);
    await request(app.getHttpServer())
      .post('/v1/chat/completions')
      .set('authorization', 'Bearer sk-mock-a')
      .send({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
      .expect(502)
      .expect('content-type', 'text/html')
      .expect('<html><body>Bad Gateway</body></html>');
  });

  it('hangs before the first byte when asked', async () => {
    await request(app.getHttpServer())
      .post('/_mock/faults')
      .send({ key: 'sk-mock-a', hang: true, times: 1 })
      .expect(204);
    const started = Date.now();
    // Under Jest the SDK cannot recognise its own abort (another realm's AbortError), so
    // it reports the timeout as the connection error it extends.
    await expect(
      client('sk-mock-a', { timeout: 300 }).chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('cuts a stream mid-way when asked, which the SDK reports', async () => {
    await request(app.getHttpServer())
      .post('/_mock/faults')
      .send({ key: 'sk-mock-a', disconnectAfterChunks: 2, times: 1 })
      .expect(204);
    const stream = await client().chat.completions.create({
      model: 'gpt-4o',
      stream: true,
      messages: [{ role: 'user', content: 'a long enough answer' }],
    });
    const received: string[] = [];
    await expect(
      (async () => {
        for await (const chunk of stream) received.push(chunk.choices[0]?.delta.content ?? '');
      })(),
    ).rejects.toThrow();
    expect(received).toHaveLength(2);
  });

  it('answers with the resolved model name and a chosen reply when asked per request', async () => {
    const response = await request(app.getHttpServer())
      .post('/v1/chat/completions')
      .set('authorization', 'Bearer sk-mock-a')
      .set('x-mock-resolved-model', 'gpt-4o-2024-08-06')
      .set('x-mock-reply', 'Fixed answer')
      .send({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] })
      .expect(200);
    expect(response.body).toMatchObject({
      model: 'gpt-4o-2024-08-06',
      choices: [{ message: { content: 'Fixed answer' } }],
    });
  });

  it('answers bad requests in OpenAI error format, never with a 500', async () => {
    const bad = await request(app.getHttpServer())
      .post('/v1/chat/completions')
      .set('authorization', 'Bearer sk-mock-a')
      .set('content-type', 'application/json')
      .send('{not json')
      .expect(400);
    expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
    await request(app.getHttpServer())
      .post('/v1/chat/completions')
      .set('authorization', 'Bearer sk-mock-a')
      .send({ model: 'gpt-4o', messages: [] })
      .expect(400);
  });
});
