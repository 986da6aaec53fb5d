import {
  lastSent,
  providerChannel,
  usageRow,
  useProviderGateway,
  type ProviderChannel,
} from '../support/provider-gateway.js';

// Rerank in Cohere's and Jina's shape in front of the gateway (docs/providers.md,
// "Rerank"): an openai channel whose upstream speaks it gets the client's bytes at
// /v1/rerank; each search unit the answer reports bills as 1,000 input tokens. The openai
// SDK has no rerank, so the spec asks with fetch, as the relays' clients do.

interface RerankAnswer {
  model: string;
  results: { index: number; relevance_score: number; document?: { text: string } }[];
  meta: { billed_units: { search_units: number } };
}

describe('gateway: rerank (/v1/rerank)', () => {
  const gateway = useProviderGateway();
  const { stack } = gateway;
  let reranker: ProviderChannel;

  const rerank = (body: unknown) =>
    fetch(`${stack.edge.url}/v1/rerank`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${gateway.token.key}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
    });

  beforeAll(async () => {
    reranker = await providerChannel(gateway, {
      prefix: 'rerank',
      provider: 'openai',
      upstreamModel: 'rerank-v3.5',
    });
  });

  it('ranks the documents, billed by its search units', async () => {
    const response = await rerank({
      model: reranker.model,
      query: 'red apples',
      documents: ['green pears', { text: 'red apples are sweet' }, 'apples'],
      top_n: 2,
      return_documents: true,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    const answer = (await response.json()) as RerankAnswer;
    expect(answer.results.map((r) => r.index)).toEqual([1, 2]);
    expect(answer.results[0]!.document).toEqual({ text: 'red apples are sweet' });
    expect(answer.meta.billed_units.search_units).toBe(1);
    const sent = await lastSent(stack, reranker.account);
    expect(sent.path).toBe('/v1/rerank');
    expect(sent.body).toMatchObject({ model: 'rerank-v3.5', query: 'red apples', top_n: 2 });
    const row = await usageRow(stack, response.headers.get('x-request-id')!);
    expect(row).toMatchObject({
      endpoint: 'rerank',
      promptTokens: 1_000,
      completionTokens: 0,
      tokensCounted: false,
      status: 200,
      channelId: reranker.channelId,
    });
    // 1 USD per million input tokens: a search unit costs 0.001 USD.
    expect(row.cost).toBe('1000');
  });

  it.each([
    [{ query: 'q', documents: ['a'] }, 'model'],
    [{ model: 'm', documents: ['a'] }, 'query'],
    [{ model: 'm', query: 'q', documents: [] }, 'documents'],
    [{ model: 'm', query: 'q', documents: [{ body: 'a' }] }, 'documents[0]'],
    [{ model: 'm', query: 'q', documents: ['a'], top_n: 0 }, 'top_n'],
  ])("refuses %j in OpenAI's error shape", async (body, param) => {
    const response = await rerank(body);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { type: 'invalid_request_error', param, code: 'invalid_request' },
    });
  });

  it("hands the upstream's own refusal back in OpenAI's error shape", async () => {
    await stack.mockFault({ key: reranker.account, status: 400, times: 1 });
    const response = await rerank({ model: reranker.model, query: 'q', documents: ['a'] });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { message: string; type: string } };
    expect(body.error.type).toBe('invalid_request_error');
    expect(typeof body.error.message).toBe('string');
  });

  it('refuses a model only an anthropic channel serves', async () => {
    const claude = await providerChannel(gateway, {
      prefix: 'rerank-claude',
      provider: 'anthropic',
      upstreamModel: 'claude-sonnet-4-5-20250929',
    });
    const response = await rerank({ model: claude.model, query: 'q', documents: ['a'] });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { message: expect.stringMatching(/anthropic channel, which does not offer rerank/) },
    });
  });
});
