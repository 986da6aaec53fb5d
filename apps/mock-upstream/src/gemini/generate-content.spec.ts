import { GoogleGenAI, type Content } from '@google/genai';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, MockUpstreamEnv } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { createService } from '@switchyard/service';
import request from 'supertest';
import { MockUpstreamModule } from '../app.module.js';

// The mock's Gemini dialect as Google's own SDK sees it: the SDK checks the paths, the key
// header, the server-sent events of a stream and the error bodies.

describe('mock-upstream: Gemini API', () => {
  let app: NestFastifyApplication;
  let baseUrl: string;
  const client = (apiKey = 'AIza-a') =>
    new GoogleGenAI({
      apiKey,
      httpOptions: {
        baseUrl,
        apiVersion: 'v1beta',
        retryOptions: { attempts: 1 },
        // The fetch the SDK captures fails inside Jest's VM modules; the test's own works.
        fetch: (input, init) => fetch(input, init),
      },
    });

  beforeAll(async () => {
    const env = loadEnvironment(MockUpstreamEnv, {
      MOCK_ACCOUNTS: 'AIza-a,AIza-limited:1:0,AIza-banned:0:0:banned',
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
    baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await app.close();
  });

  afterEach(async () => {
    await request(app.getHttpServer()).post('/_mock/reset').expect(204);
  });

  it('answers generateContent with usage; the system instruction counts as cached content', async () => {
    const response = await client().models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'hello there',
      config: { systemInstruction: 'You are a mock of sixteen chars.', temperature: 0.2 },
    });
    expect(response.text).toBe('Echo: hello there');
    expect(response.candidates?.[0]?.finishReason).toBe('STOP');
    expect(response.modelVersion).toBe('gemini-2.5-flash');
    expect(response.usageMetadata).toEqual({
      promptTokenCount: 11,
      candidatesTokenCount: 5,
      totalTokenCount: 16,
      cachedContentTokenCount: 8,
    });
    const log = (await request(app.getHttpServer()).get('/_mock/accounts/AIza-a/requests'))
      .body as { path: string; headers: Record<string, string> }[];
    expect(log[0]?.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(log[0]?.headers['x-goog-api-key']).toBeUndefined();
  });

  it('streams server-sent events: text in pieces, the finish reason and usage last', async () => {
    const stream = await client().models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents: 'stream three words',
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.map((c) => c.text).join('')).toBe('Echo: stream three words');
    expect(chunks.slice(0, -1).every((c) => c.candidates?.[0]?.finishReason === undefined)).toBe(
      true,
    );
    expect(chunks.at(-1)?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(chunks.at(-1)?.usageMetadata?.candidatesTokenCount).toBe(6);
    const log = (await request(app.getHttpServer()).get('/_mock/accounts/AIza-a/requests'))
      .body as { path: string }[];
    expect(log[0]?.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  });

  it('calls the declared function with a signature, and answers the function response', async () => {
    const tools = [
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } } },
          },
        ],
      },
    ];
    const question: Content = { role: 'user', parts: [{ text: 'weather?' }] };
    const first = await client().models.generateContent({
      model: 'gemini-3-pro-preview',
      contents: [question],
      config: { tools },
    });
    const call = first.candidates![0]!.content!.parts![0]!;
    expect(call.functionCall).toEqual({ name: 'get_weather', args: { city: 'example city' } });
    expect(call.thoughtSignature).toEqual(expect.any(String));

    const answered = (signed: boolean) =>
      client().models.generateContent({
        model: 'gemini-3-pro-preview',
        contents: [
          question,
          {
            role: 'model',
            parts: [signed ? call : { functionCall: call.functionCall }],
          },
          {
            role: 'user',
            parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny' } } }],
          },
        ],
        config: { tools },
      });
    expect((await answered(true)).text).toBe('Echo: sunny');
    await expect(answered(false)).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('missing a thought_signature'),
    });
  });

  it('embeds a batch of texts', async () => {
    const response = await client().models.embedContent({
      model: 'gemini-embedding-001',
      contents: ['one', 'two'],
      config: { outputDimensionality: 4 },
    });
    expect(response.embeddings).toHaveLength(2);
    expect(response.embeddings![0]!.values).toHaveLength(4);
  });

  it("refuses in Google's error shape: unknown key (400), banned (403), quota (429), overloaded, bad body", async () => {
    const contents = 'x';
    const model = 'gemini-2.5-flash';
    const unknown = await request(app.getHttpServer())
      .post(`/v1beta/models/${model}:generateContent`)
      .set('x-goog-api-key', 'AIza-unknown')
      .send({ contents: [{ parts: [{ text: 'x' }] }] })
      .expect(400);
    expect(unknown.body.error).toMatchObject({
      code: 400,
      status: 'INVALID_ARGUMENT',
      message: 'API key not valid. Please pass a valid API key.',
      details: [expect.objectContaining({ reason: 'API_KEY_INVALID' })],
    });
    await expect(
      client('AIza-banned').models.generateContent({ model, contents }),
    ).rejects.toMatchObject({ status: 403 });
    await client('AIza-limited').models.generateContent({ model, contents });
    await expect(
      client('AIza-limited').models.generateContent({ model, contents }),
    ).rejects.toMatchObject({
      status: 429,
      message: expect.stringContaining('RESOURCE_EXHAUSTED'),
    });
    await request(app.getHttpServer())
      .post('/_mock/faults')
      .send({ key: 'AIza-a', status: 503, times: 1 })
      .expect(204);
    await expect(client().models.generateContent({ model, contents })).rejects.toMatchObject({
      status: 503,
      message: expect.stringContaining('UNAVAILABLE'),
    });
    const stray = await request(app.getHttpServer())
      .post(`/v1beta/models/${model}:generateContent`)
      .query({ key: 'AIza-a' })
      .send({ contents: [{ role: 'assistant', parts: [{ text: 'x' }] }], max_tokens: 5 })
      .expect(400);
    expect(stray.body.error).toEqual({
      code: 400,
      status: 'INVALID_ARGUMENT',
      message: 'Invalid JSON payload received. Unknown name "max_tokens": Cannot find field.',
    });
    const role = await request(app.getHttpServer())
      .post(`/v1beta/models/${model}:generateContent`)
      .query({ key: 'AIza-a' })
      .send({ contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] })
      .expect(400);
    expect(role.body.error.message).toBe('Please use a valid role: user, model.');
  });

  it('counts tokens for free, and embeds one content with embedContent', async () => {
    const count = await client().models.countTokens({
      model: 'gemini-2.5-flash',
      contents: 'count these words please',
    });
    expect(count.totalTokens).toBeGreaterThan(0);
    await request(app.getHttpServer())
      .post('/v1beta/models/gemini-2.5-flash:countTokens')
      .set('x-goog-api-key', 'AIza-a')
      .send({ generateContentRequest: { model: 'models/other', contents: [] } })
      .expect(400);
    const embedded = await request(app.getHttpServer())
      .post('/v1beta/models/gemini-embedding-001:embedContent')
      .set('x-goog-api-key', 'AIza-a')
      .send({ content: { parts: [{ text: 'embed me' }] }, outputDimensionality: 4 })
      .expect(200);
    expect((embedded.body as { embedding: { values: number[] } }).embedding.values).toHaveLength(4);
  });
});
