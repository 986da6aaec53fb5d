import Anthropic from '@anthropic-ai/sdk';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, MockUpstreamEnv } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { createService } from '@switchyard/service';
import request from 'supertest';
import { MockUpstreamModule } from '../app.module.js';

// The mock's Anthropic dialect as Anthropic's own SDK sees it: the SDK checks the paths,
// the key header, the event order of a stream and the error bodies.

describe('mock-upstream: Anthropic Messages API', () => {
  let app: NestFastifyApplication;
  let baseURL: string;
  const client = (apiKey = 'sk-ant-a') => new Anthropic({ apiKey, baseURL, maxRetries: 0 });

  beforeAll(async () => {
    const env = loadEnvironment(MockUpstreamEnv, {
      MOCK_ACCOUNTS: 'sk-ant-a,sk-ant-limited:1:0,sk-ant-banned:0:0:banned',
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
    baseURL = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app.close();
  });

  afterEach(async () => {
    await request(app.getHttpServer()).post('/_mock/reset').expect(204);
  });

  it('answers a message with usage; the system prompt counts as cache reads', async () => {
    const message = await client().messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      system: 'You are a mock of sixteen chars.',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'Echo: hello there' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 3, cache_read_input_tokens: 8, cache_creation_input_tokens: 0 },
    });
    const log = (await request(app.getHttpServer()).get('/_mock/accounts/sk-ant-a/requests'))
      .body as { path: string; headers: Record<string, string> }[];
    expect(log[0]?.path).toBe('/v1/messages');
    expect(log[0]?.headers['x-api-key']).toBeUndefined();
  });

  it('streams the documented events in order, a tool call as input_json_delta', async () => {
    const stream = client().messages.stream({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [
        {
          name: 'get_weather',
          input_schema: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ],
    });
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    const message = await stream.finalMessage();
    expect(types[0]).toBe('message_start');
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      {
        type: 'tool_use',
        id: expect.stringMatching(/^toolu_/),
        name: 'get_weather',
        input: { city: 'example city' },
      },
    ]);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it('answers a tool result with its content', async () => {
    const message = await client().messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'w', input: {} }] },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }],
        },
      ],
      tools: [{ name: 'w', input_schema: { type: 'object' } }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: sunny' }]);
  });

  it("refuses in Anthropic's error shape: bad key, banned, rate limit, overloaded, bad body", async () => {
    const body = {
      model: 'claude-sonnet-4-5',
      max_tokens: 10,
      messages: [{ role: 'user' as const, content: 'x' }],
    };
    await expect(client('sk-ant-unknown').messages.create(body)).rejects.toMatchObject({
      status: 401,
      error: { type: 'error', error: { type: 'authentication_error' } },
    });
    await expect(client('sk-ant-banned').messages.create(body)).rejects.toMatchObject({
      status: 401,
    });
    await client('sk-ant-limited').messages.create(body);
    await expect(client('sk-ant-limited').messages.create(body)).rejects.toMatchObject({
      status: 429,
      error: { error: { type: 'rate_limit_error' } },
    });
    await request(app.getHttpServer())
      .post('/_mock/faults')
      .send({ key: 'sk-ant-a', status: 529, times: 1 })
      .expect(204);
    await expect(client().messages.create(body)).rejects.toMatchObject({
      status: 529,
      error: { error: { type: 'overloaded_error', message: 'Overloaded' } },
    });
    const missing = await request(app.getHttpServer())
      .post('/v1/messages')
      .set('x-api-key', 'sk-ant-a')
      .set('anthropic-version', '2023-06-01')
      .send({ model: 'c', messages: [{ role: 'system', content: 'x' }], max_tokens: 5 })
      .expect(400);
    expect(missing.body).toEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: "messages.0.role: Input should be 'user' or 'assistant'",
      },
    });
    const noBudget = await request(app.getHttpServer())
      .post('/v1/messages')
      .set('x-api-key', 'sk-ant-a')
      .set('anthropic-version', '2023-06-01')
      .send({ model: 'c', messages: [{ role: 'user', content: 'x' }] })
      .expect(400);
    expect(noBudget.body.error.message).toBe('max_tokens: Field required');
  });

  it('refuses tools, system and content blocks that are not objects with a 400, as Anthropic does', async () => {
    const malformed: [Record<string, unknown>, string][] = [
      [{ tools: [null] }, 'tools.0.name: Field required'],
      [{ tools: [{ name: 'w' }, 'x'] }, 'tools.1.name: Field required'],
      [{ tool_choice: { type: 3 } }, 'tool_choice: Input should be a valid dictionary'],
      [{ system: [null] }, 'system.0: Input should be a valid dictionary'],
      [
        {
          messages: [
            { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'w', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [7] }] },
          ],
        },
        'messages.1.content.tool_result.content.0: Input should be a valid dictionary',
      ],
      [
        { messages: [{ role: 'user', content: [null] }] },
        'messages.0.content.0: Input should be a valid dictionary',
      ],
    ];
    for (const [change, message] of malformed) {
      const refused = await request(app.getHttpServer())
        .post('/v1/messages')
        .set('x-api-key', 'sk-ant-a')
        .set('anthropic-version', '2023-06-01')
        .send({ model: 'c', max_tokens: 5, messages: [{ role: 'user', content: 'x' }], ...change })
        .expect(400);
      expect(refused.body).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message },
      });
    }
  });

  it("refuses a body it cannot parse in Anthropic's error shape too", async () => {
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      for (const body of ['{"model":', '{"model":"c","system":"\\ud800"}']) {
        const refused = await request(app.getHttpServer())
          .post(path)
          .set('x-api-key', 'sk-ant-a')
          .set('anthropic-version', '2023-06-01')
          .set('content-type', 'application/json')
          .send(body)
          .expect(400);
        expect(refused.body).toMatchObject({
          type: 'error',
          error: { type: 'invalid_request_error', message: expect.any(String) },
        });
      }
    }
  });
});
