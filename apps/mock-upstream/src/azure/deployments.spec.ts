import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, MockUpstreamEnv } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { createService } from '@switchyard/service';
import { AzureOpenAI } from 'openai';
import request from 'supertest';
import { MockUpstreamModule } from '../app.module.js';

// The mock's Azure OpenAI dialect as the openai SDK's Azure client sees it: deployment
// paths, the api-key header, the api-version query, the filter annotations and the errors.

describe('mock-upstream: Azure OpenAI', () => {
  let app: NestFastifyApplication;
  let endpoint: string;
  const client = (apiKey = 'az-a', apiVersion = '2024-10-21') =>
    new AzureOpenAI({ apiKey, endpoint, apiVersion, deployment: 'gpt-4o-prod', maxRetries: 0 });

  beforeAll(async () => {
    const env = loadEnvironment(MockUpstreamEnv, {
      MOCK_ACCOUNTS: 'az-a,az-limited:1:0,az-banned:0:0:banned',
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
    endpoint = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app.close();
  });

  afterEach(async () => {
    await request(app.getHttpServer()).post('/_mock/reset').expect(204);
  });

  it('answers a chat completion on the deployment path with filter results and usage', async () => {
    const completion = await client().chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello azure' }],
    });
    expect(completion).toMatchObject({
      model: 'gpt-4o-prod',
      choices: [{ message: { content: 'Echo: hello azure' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 5 },
      prompt_filter_results: [{ prompt_index: 0 }],
    });
    const log = (await request(app.getHttpServer()).get('/_mock/accounts/az-a/requests')).body as {
      path: string;
      headers: Record<string, string>;
    }[];
    expect(log[0]?.path).toBe(
      '/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21',
    );
    expect(log[0]?.headers['api-key']).toBeUndefined();
  });

  it('streams the prompt-filter announcement first, then chunks, usage when asked, [DONE]', async () => {
    const stream = await client().chat.completions.create({
      model: 'gpt-4o',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'three words here' }],
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]).toMatchObject({ choices: [], prompt_filter_results: [{ prompt_index: 0 }] });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(
      'Echo: three words here',
    );
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 6 } });
    // Versions before 2024-09-01 do not know stream_options.
    await expect(
      client('az-a', '2024-06-01').chat.completions.create({
        model: 'gpt-4o',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('Unrecognized request argument supplied: stream_options'),
    });
  });

  it('embeds on the deployment path', async () => {
    const embeddings = await new AzureOpenAI({
      apiKey: 'az-a',
      endpoint,
      apiVersion: '2024-10-21',
      deployment: 'embed-prod',
      maxRetries: 0,
    }).embeddings.create({
      model: 'text-embedding-3-small',
      input: ['a', 'b'],
      encoding_format: 'float',
    });
    expect(embeddings.data).toHaveLength(2);
    expect(embeddings.usage.prompt_tokens).toBe(2);
  });

  it("refuses in Azure's error shape: bad key, rate limit, missing deployment, missing api-version", async () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: 'x' }] };
    await expect(client('az-unknown').chat.completions.create(body)).rejects.toMatchObject({
      status: 401,
      error: { code: '401', message: expect.stringContaining('Access denied') },
    });
    await client('az-limited').chat.completions.create(body);
    await expect(client('az-limited').chat.completions.create(body)).rejects.toMatchObject({
      status: 429,
      error: { code: '429' },
    });
    await request(app.getHttpServer())
      .post('/_mock/faults')
      .send({ key: 'az-a', status: 404, times: 1 })
      .expect(204);
    await expect(client().chat.completions.create(body)).rejects.toMatchObject({
      status: 404,
      error: { code: 'DeploymentNotFound' },
    });
    const unversioned = await request(app.getHttpServer())
      .post('/openai/deployments/gpt-4o-prod/chat/completions')
      .set('api-key', 'az-a')
      .send(body)
      .expect(404);
    expect(unversioned.body).toEqual({ error: { code: '404', message: 'Resource not found' } });
  });
});
