import {
  lastSent,
  providerChannel,
  usageRow,
  useProviderGateway,
  type ProviderChannel,
  type UsageRow,
} from '../support/provider-gateway.js';

// Gemini's API in front of the gateway (docs/providers.md, "Gemini's API in front"), over
// plain HTTP as Google's REST reference writes it: passed through to a gemini channel,
// converted for openai and anthropic channels; JSON answers, both stream framings, tools,
// token counts, embeddings, errors in Google's shape, and the key in its two places.

/** What the test models cost, per million tokens: 1 USD in, 0.10 USD cached in, 2 USD out. */
function expectedCost(row: UsageRow): string {
  const uncached = row.promptTokens - row.cachedTokens;
  return String(Math.ceil(uncached * 1 + row.cachedTokens * 0.1 + row.completionTokens * 2));
}

interface GenerateContentResponse {
  candidates: {
    content: {
      role: string;
      parts: { text?: string; functionCall?: { name: string; args: unknown } }[];
    };
    finishReason?: string;
  }[];
  usageMetadata?: {
    promptTokenCount: number;
    candidatesTokenCount: number;
    totalTokenCount: number;
  };
}

interface GoogleError {
  error: { code: number; message: string; status: string };
}

const weather = {
  functionDeclarations: [
    {
      name: 'get_weather',
      description: 'Weather in a city',
      parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
    },
  ],
};

function textOf(responses: GenerateContentResponse[]): string {
  return responses
    .flatMap((r) => r.candidates?.[0]?.content.parts ?? [])
    .map((p) => p.text ?? '')
    .join('');
}

/** The events of a server-sent event stream, each a JSON object. */
function sseEvents<T>(text: string): T[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice(6)) as T);
}

describe("gateway: Gemini's API in front (/v1beta/models/{model}:{method})", () => {
  const gateway = useProviderGateway();
  const { stack } = gateway;

  /** A request as Google's REST examples send it: the key in `x-goog-api-key` unless told. */
  async function call(
    path: string,
    body: unknown,
    options: { key?: string | null; query?: string; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const key = options.key === undefined ? gateway.token.key : options.key;
    return fetch(`${stack.edge.url}${path}${options.query ?? ''}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(key ? { 'x-goog-api-key': key } : {}),
        ...options.headers,
      },
      body: JSON.stringify(body),
    });
  }

  const hello = (text: string) => ({ contents: [{ role: 'user', parts: [{ text }] }] });

  describe.each([
    ['gemini', 'gemini-2.5-flash', 'gemini-embedding-001'],
    ['openai', 'gpt-4o-mini', 'text-embedding-3-small'],
    ['anthropic', 'claude-sonnet-4-5-20250929', null],
  ] as const)('on a %s channel', (provider, upstreamModel, embeddingModel) => {
    let target: ProviderChannel;
    const embedder = embeddingModel ? `${provider}-embed-front` : null;

    beforeAll(async () => {
      target = await providerChannel(gateway, {
        prefix: `gem-front-${provider}`,
        provider,
        upstreamModel,
        ...(embedder && embeddingModel ? { alsoServes: { [embedder]: embeddingModel } } : {}),
      });
    });

    it('answers generateContent as Gemini does, metered from its usage', async () => {
      const response = await call(`/v1beta/models/${target.model}:generateContent`, {
        ...hello('hello gemini'),
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        generationConfig: { temperature: 0.2, maxOutputTokens: 64 },
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as GenerateContentResponse;
      expect(textOf([body])).toBe('Echo: hello gemini');
      expect(body.candidates[0]).toMatchObject({
        content: { role: 'model' },
        finishReason: 'STOP',
      });
      const usage = body.usageMetadata!;
      expect(usage.totalTokenCount).toBe(usage.promptTokenCount + usage.candidatesTokenCount);
      const sent = await lastSent(stack, target.account);
      if (provider === 'gemini') {
        // The client's body as it came, on the channel's model.
        expect(sent.path).toBe(`/v1beta/models/${upstreamModel}:generateContent`);
        expect(sent.body).toEqual({
          ...hello('hello gemini'),
          systemInstruction: { parts: [{ text: 'Be brief.' }] },
          generationConfig: { temperature: 0.2, maxOutputTokens: 64 },
        });
      } else {
        expect(sent.body).toMatchObject({ model: upstreamModel, temperature: 0.2 });
      }
      const row = await usageRow(stack, response.headers.get('x-request-id')!);
      expect(row).toMatchObject({
        endpoint: 'gemini.generate',
        promptTokens: usage.promptTokenCount,
        completionTokens: usage.candidatesTokenCount,
        status: 200,
        stream: false,
        channelId: target.channelId,
      });
      expect(row.cost).toBe(expectedCost(row));
    });

    it('streams server-sent events with alt=sse, usage in the last event', async () => {
      const response = await call(
        `/v1beta/models/${target.model}:streamGenerateContent`,
        hello('stream me'),
        { query: '?alt=sse' },
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
      const events = sseEvents<GenerateContentResponse>(await response.text());
      expect(textOf(events)).toBe('Echo: stream me');
      const last = events.at(-1)!;
      expect(last.candidates[0]!.finishReason).toBe('STOP');
      const row = await usageRow(stack, response.headers.get('x-request-id')!);
      expect(row).toMatchObject({
        endpoint: 'gemini.generate',
        promptTokens: last.usageMetadata!.promptTokenCount,
        completionTokens: last.usageMetadata!.candidatesTokenCount,
        stream: true,
        status: 200,
      });
    });

    it('streams one JSON array without alt=sse', async () => {
      const response = await call(
        `/v1beta/models/${target.model}:streamGenerateContent`,
        hello('an array please'),
      );
      expect(response.status).toBe(200);
      // Google's own answer to this call is application/json, and its SDKs read it as such.
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const text = await response.text();
      expect(text.startsWith('[')).toBe(true);
      const array = JSON.parse(text) as GenerateContentResponse[];
      expect(textOf(array)).toBe('Echo: an array please');
      expect(array.at(-1)!.usageMetadata!.totalTokenCount).toBeGreaterThan(0);
      expect((await usageRow(stack, response.headers.get('x-request-id')!)).stream).toBe(true);
    });

    it('calls functions and reads their responses', async () => {
      const first = await call(`/v1beta/models/${target.model}:generateContent`, {
        ...hello('Weather in Paris?'),
        tools: [weather],
      });
      expect(first.status).toBe(200);
      const answer = (await first.json()) as GenerateContentResponse;
      const callPart = answer.candidates[0]!.content.parts.find((p) => p.functionCall);
      expect(callPart?.functionCall).toMatchObject({ name: 'get_weather' });
      const second = await call(`/v1beta/models/${target.model}:generateContent`, {
        contents: [
          hello('Weather in Paris?').contents[0],
          { role: 'model', parts: [callPart] },
          {
            role: 'user',
            parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }],
          },
        ],
        tools: [weather],
      });
      expect(second.status).toBe(200);
      expect(textOf([(await second.json()) as GenerateContentResponse])).toContain('21');
      expect((await usageRow(stack, second.headers.get('x-request-id')!)).endpoint).toBe(
        'gemini.generate',
      );
    });

    it('counts tokens for free', async () => {
      const response = await call(
        `/v1beta/models/${target.model}:countTokens`,
        hello('count these words'),
      );
      expect(response.status).toBe(200);
      const { totalTokens } = (await response.json()) as { totalTokens: number };
      expect(totalTokens).toBeGreaterThan(0);
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        endpoint: 'gemini.count_tokens',
        promptTokens: 0,
        completionTokens: 0,
        cost: '0',
        channelId: target.channelId,
      });
    });

    it('embeds one content and a batch, or refuses where the provider has no embeddings', async () => {
      const content = { parts: [{ text: 'embed me' }] };
      if (!embedder) {
        const refused = await call(`/v1beta/models/${target.model}:embedContent`, { content });
        expect(refused.status).toBe(400);
        expect(((await refused.json()) as GoogleError).error.status).toBe('INVALID_ARGUMENT');
        return;
      }
      const one = await call(`/v1beta/models/${embedder}:embedContent`, {
        content,
        outputDimensionality: 4,
      });
      expect(one.status).toBe(200);
      const { embedding } = (await one.json()) as { embedding: { values: number[] } };
      expect(embedding.values).toHaveLength(4);
      expect((await usageRow(stack, one.headers.get('x-request-id')!)).endpoint).toBe(
        'gemini.embed',
      );
      const batch = await call(`/v1beta/models/${embedder}:batchEmbedContents`, {
        requests: [
          { model: `models/${embedder}`, content, outputDimensionality: 4 },
          {
            model: `models/${embedder}`,
            content: { parts: [{ text: 'and me' }] },
            outputDimensionality: 4,
          },
        ],
      });
      expect(batch.status).toBe(200);
      const { embeddings } = (await batch.json()) as { embeddings: { values: number[] }[] };
      expect(embeddings).toHaveLength(2);
      const row = await usageRow(stack, batch.headers.get('x-request-id')!);
      expect(row).toMatchObject({ endpoint: 'gemini.embed', status: 200, completionTokens: 0 });
      expect(row.promptTokens).toBeGreaterThan(0);
    });
  });

  describe('keys, versions and errors', () => {
    let flash: ProviderChannel;

    beforeAll(async () => {
      flash = await providerChannel(gateway, {
        prefix: 'gem-front-keys',
        provider: 'gemini',
        upstreamModel: 'gemini-2.5-flash',
      });
    });

    it('takes the key as ?key= and under /v1 as well', async () => {
      const response = await call(`/v1/models/${flash.model}:generateContent`, hello('query key'), {
        key: null,
        query: `?key=${gateway.token.key}`,
      });
      expect(response.status).toBe(200);
      expect(textOf([(await response.json()) as GenerateContentResponse])).toBe('Echo: query key');
      const bearer = await call(`/v1beta/models/${flash.model}:generateContent`, hello('bearer'), {
        key: null,
        headers: { authorization: `Bearer ${gateway.token.key}` },
      });
      expect(bearer.status).toBe(200);
    });

    it('refuses two different keys, and an unknown one, in Google’s shape', async () => {
      const both = await call(`/v1beta/models/${flash.model}:generateContent`, hello('x'), {
        query: '?key=sk-another-key',
      });
      expect(both.status).toBe(400);
      expect(await both.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } });
      const same = await call(`/v1beta/models/${flash.model}:generateContent`, hello('same'), {
        query: `?key=${gateway.token.key}`,
      });
      expect(same.status).toBe(200);
      const unknown = await call(`/v1beta/models/${flash.model}:generateContent`, hello('x'), {
        key: 'sk-not-a-token',
      });
      expect(unknown.status).toBe(401);
      expect(await unknown.json()).toMatchObject({
        error: { code: 401, status: 'UNAUTHENTICATED' },
      });
    });

    it('answers an unknown method, a bad body and an unknown model in Google’s shape', async () => {
      for (const version of ['v1beta', 'v1']) {
        const method = await call(`/${version}/models/${flash.model}:foo`, hello('x'));
        expect(method.status).toBe(404);
        expect(await method.json()).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } });
      }
      const bad = await call(`/v1beta/models/${flash.model}:generateContent`, { contents: [] });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as GoogleError).error).toMatchObject({
        status: 'INVALID_ARGUMENT',
        message: expect.stringContaining('contents') as unknown,
      });
      const model = await call('/v1beta/models/no-such-model:generateContent', hello('x'));
      expect(model.status).toBe(404);
      expect(((await model.json()) as GoogleError).error.status).toBe('NOT_FOUND');
    });

    it('lists and gets the models the token may use', async () => {
      const list = await fetch(`${stack.edge.url}/v1beta/models?key=${gateway.token.key}`);
      expect(list.status).toBe(200);
      const { models } = (await list.json()) as { models: { name: string }[] };
      expect(models.map((m) => m.name)).toContain(`models/${flash.model}`);
      const one = await fetch(`${stack.edge.url}/v1beta/models/${flash.model}`, {
        headers: { 'x-goog-api-key': gateway.token.key },
      });
      expect(await one.json()).toMatchObject({
        name: `models/${flash.model}`,
        supportedGenerationMethods: expect.arrayContaining(['generateContent']) as unknown,
      });
      const missing = await fetch(`${stack.edge.url}/v1beta/models/no-such-model`, {
        headers: { 'x-goog-api-key': gateway.token.key },
      });
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as GoogleError).error.status).toBe('NOT_FOUND');
      // /v1/models is OpenAI's list, in Gemini's shape for a Google client (its SDK lists there).
      const openai = await fetch(`${stack.edge.url}/v1/models`, {
        headers: { authorization: `Bearer ${gateway.token.key}` },
      });
      expect(await openai.json()).toMatchObject({ object: 'list' });
      const google = await fetch(`${stack.edge.url}/v1/models`, {
        headers: { 'x-goog-api-key': gateway.token.key },
      });
      const listed = (await google.json()) as { models: { name: string }[] };
      expect(listed.models.map((m) => m.name)).toContain(`models/${flash.model}`);
      const got = await fetch(
        `${stack.edge.url}/v1/models/${flash.model}?key=${gateway.token.key}`,
      );
      expect(await got.json()).toMatchObject({ name: `models/${flash.model}` });
    });
  });
});
