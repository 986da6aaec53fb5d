import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, MockUpstreamEnv } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { createService } from '@switchyard/service';
import OpenAI from 'openai';
import request from 'supertest';
import { MockUpstreamModule } from '../app.module.js';

// Legacy completions and moderations as the official SDK sees them, with the mock's
// accounts and faults.

describe('mock-upstream: legacy completions and moderations', () => {
  let app: NestFastifyApplication;
  let baseURL: string;
  const http = () => request(app.getHttpServer());
  const client = (apiKey = 'sk-a') => new OpenAI({ apiKey, baseURL, maxRetries: 0 });

  beforeAll(async () => {
    const env = loadEnvironment(MockUpstreamEnv, { MOCK_ACCOUNTS: 'sk-a,sk-banned:0:0:banned' });
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
    await http().post('/_mock/reset').expect(204);
  });

  it('completes each prompt, n times, with usage', async () => {
    const completion = await client().completions.create({
      model: 'gpt-3.5-turbo-instruct',
      prompt: ['one', 'two'],
      n: 2,
    });
    expect(completion.object).toBe('text_completion');
    expect(completion.choices.map((c) => [c.index, c.text, c.finish_reason])).toEqual([
      [0, 'Echo: one', 'stop'],
      [1, 'Echo: one', 'stop'],
      [2, 'Echo: two', 'stop'],
      [3, 'Echo: two', 'stop'],
    ]);
    expect(completion.usage).toEqual({
      prompt_tokens: 2,
      completion_tokens: 12,
      total_tokens: 14,
    });
  });

  it('echoes the prompt when asked, and takes token ids', async () => {
    const completion = await client().completions.create({
      model: 'gpt-3.5-turbo-instruct',
      prompt: [1, 2, 3],
      echo: true,
    });
    expect(completion.choices[0]?.text).toBe('1 2 3Echo: 1 2 3');
  });

  it('streams pieces, a finish per choice, then usage when asked', async () => {
    const stream = await client().completions.create({
      model: 'gpt-3.5-turbo-instruct',
      prompt: 'one two three',
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const finishes: (string | null)[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? '';
      if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Echo: one two three');
    expect(finishes).toEqual(['stop']);
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('applies the fault headers: a status, a reply, a cut stream', async () => {
    const body = { model: 'gpt-3.5-turbo-instruct', prompt: 'hi' };
    const failed = await http()
      .post('/v1/completions')
      .set('authorization', 'Bearer sk-a')
      .set('x-mock-status', '503')
      .send(body)
      .expect(503);
    expect(failed.body.error.type).toBe('server_error');
    const told = await http()
      .post('/v1/completions')
      .set('authorization', 'Bearer sk-a')
      .set('x-mock-reply', 'told')
      .send(body)
      .expect(200);
    expect(told.body.choices[0].text).toBe('told');
    const cut = await http()
      .post('/v1/completions')
      .set('authorization', 'Bearer sk-a')
      .set('x-mock-disconnect-after', '1')
      .send({ ...body, prompt: 'a b c d', stream: true })
      .then(
        (response) => response.text,
        () => 'cut',
      );
    expect(cut).not.toContain('[DONE]');
  });

  it.each([
    [{ prompt: 'x' }, "'model'"],
    [{ model: 'm' }, "'prompt'"],
    [{ model: 'm', prompt: [{}] }, "'prompt'"],
    [{ model: 'm', prompt: 'x', n: 0 }, "'n'"],
  ])('refuses %j with a 400', async (body, param) => {
    const response = await http()
      .post('/v1/completions')
      .set('authorization', 'Bearer sk-a')
      .send(body)
      .expect(400);
    expect(response.body.error.type).toBe('invalid_request_error');
    expect(response.body.error.message).toContain(param);
  });

  it('moderates each input: trigger words flag their category', async () => {
    const moderation = await client().moderations.create({
      model: 'omni-moderation-latest',
      input: ['a kind word', 'I will kill the process'],
    });
    expect(moderation.model).toBe('omni-moderation-latest');
    expect(moderation.results.map((r) => r.flagged)).toEqual([false, true]);
    expect(moderation.results[1]?.categories.violence).toBe(true);
    expect(moderation.results[1]?.category_scores.violence).toBeGreaterThan(0.9);
    expect(moderation.results[0]?.category_scores.violence).toBeLessThan(0.02);
  });

  it('moderates text and image parts as one input', async () => {
    const moderation = await client().moderations.create({
      model: 'omni-moderation-latest',
      input: [
        { type: 'text', text: 'nsfw?' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      ],
    });
    expect(moderation.results).toHaveLength(1);
    expect(moderation.results[0]?.categories.sexual).toBe(true);
    expect(moderation.results[0]?.category_applied_input_types.sexual).toEqual(['text', 'image']);
  });

  it('refuses moderating nothing, and applies the key checks and faults', async () => {
    const bad = await http()
      .post('/v1/moderations')
      .set('authorization', 'Bearer sk-a')
      .send({ input: [] })
      .expect(400);
    expect(bad.body.error.message).toContain("'input'");
    await http()
      .post('/v1/moderations')
      .set('authorization', 'Bearer sk-banned')
      .send({ input: 'x' })
      .expect(401);
    await http().post('/_mock/faults').send({ key: 'sk-a', status: 429, times: 1 }).expect(204);
    await http()
      .post('/v1/moderations')
      .set('authorization', 'Bearer sk-a')
      .send({ input: 'x' })
      .expect(429);
  });
});
