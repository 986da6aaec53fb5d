import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, MockUpstreamEnv } from '@switchyard/config';
import { createLogger } from '@switchyard/observability';
import { createService } from '@switchyard/service';
import request from 'supertest';
import { MockUpstreamModule } from '../app.module.js';

describe('mock-upstream: rerank', () => {
  let app: NestFastifyApplication;
  const rerank = (body: unknown, headers: Record<string, string> = {}) =>
    request(app.getHttpServer())
      .post('/v1/rerank')
      .set('authorization', 'Bearer co-a')
      .set(headers)
      .send(body as object);

  beforeAll(async () => {
    const env = loadEnvironment(MockUpstreamEnv, { MOCK_ACCOUNTS: 'co-a' });
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
  });

  afterAll(async () => {
    await app.close();
  });

  const DOCUMENTS = [
    'Carson City is the capital city of the American state of Nevada.',
    'Washington, D.C. is the capital of the United States.',
    'Capital punishment has existed in the United States since before it was a country.',
    'The Commonwealth of the Northern Mariana Islands is a group of islands.',
  ];

  it('orders documents by their overlap with the query, the same each time', async () => {
    const body = {
      model: 'rerank-v3.5',
      query: 'What is the capital of the United States?',
      documents: DOCUMENTS,
      top_n: 3,
    };
    const response = await rerank(body).expect(200);
    expect(response.body.results.map((r: { index: number }) => r.index)).toEqual([1, 0, 2]);
    const scores = response.body.results.map((r: { relevance_score: number }) => r.relevance_score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    for (const score of scores) expect(score).toBeGreaterThan(0);
    expect(response.body.results[0]).not.toHaveProperty('document');
    expect(response.body).toMatchObject({
      id: expect.any(String),
      meta: { billed_units: { search_units: 1 } },
      usage: { total_tokens: expect.any(Number) },
    });
    expect((await rerank(body).expect(200)).body.results).toEqual(response.body.results);
  });

  it('takes documents as objects, Jina-style, and returns them when asked', async () => {
    const response = await rerank({
      model: 'jina-reranker-v2-base-multilingual',
      query: 'islands',
      documents: DOCUMENTS.map((text) => ({ text })),
      return_documents: true,
    }).expect(200);
    expect(response.body.results).toHaveLength(4);
    expect(response.body.results[0]).toMatchObject({ index: 3, document: { text: DOCUMENTS[3] } });
    expect(response.body.results[3].relevance_score).toBe(0);
  });

  it.each([
    [{ query: 'q', documents: ['a'] }, 'model'],
    [{ model: 'm', query: '', documents: ['a'] }, 'query'],
    [{ model: 'm', query: 'q', documents: [] }, 'documents'],
    [{ model: 'm', query: 'q', documents: [1] }, 'documents[0]'],
    [{ model: 'm', query: 'q', documents: ['a'], top_n: 0 }, 'top_n'],
  ])('refuses %j with a 400 in Cohere shape', async (body, field) => {
    const response = await rerank(body).expect(400);
    expect(response.body).toEqual({
      id: expect.any(String),
      message: expect.stringContaining(field),
    });
  });

  it('applies the fault headers and scripts, in Cohere shape', async () => {
    const body = { model: 'm', query: 'q', documents: ['q'] };
    const failed = await rerank(body, { 'x-mock-status': '500' }).expect(500);
    expect(failed.body.message).toContain('internal server error');
    await rerank(body, { authorization: 'Bearer nobody' }).expect(401);
    const served = await rerank(body, { 'x-mock-resolved-model': 'rerank-v3.5-2024' }).expect(200);
    expect(served.body.model).toBe('rerank-v3.5-2024');
  });
});
