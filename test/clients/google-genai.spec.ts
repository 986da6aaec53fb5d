import { ApiError, GoogleGenAI, Type } from '@google/genai';
import { query, waitFor } from '@switchyard/testing';
import {
  providerChannel,
  streamedUsageRow,
  usageRow,
  useProviderGateway,
  type ProviderChannel,
} from '../support/provider-gateway.js';

// Google's own SDK (@google/genai) against the gateway's Gemini API (docs/providers.md,
// "Gemini's API in front"), with the gateway's token as its API key: what a Gemini
// application changes to use the gateway is its base URL and its key.

/** The request id of an SDK answer, from the HTTP response it keeps. */
function requestId(answer: { sdkHttpResponse?: { headers?: Record<string, string> } }): string {
  const id = answer.sdkHttpResponse?.headers?.['x-request-id'];
  expect(id).toBeDefined();
  return id!;
}

/**
 * The SDK against the edge, with `key`. It is given Node's fetch: it otherwise looks for
 * the dispatcher Node's fetch puts on the global object, which a Jest spec's own context
 * does not have.
 */
function genai(baseUrl: string, key: string): GoogleGenAI {
  return new GoogleGenAI({
    apiKey: key,
    httpOptions: { baseUrl, timeout: 20_000, fetch: (input, init) => fetch(input, init) },
  });
}

describe('clients: the @google/genai SDK', () => {
  const gateway = useProviderGateway();
  const { stack } = gateway;
  let ai: GoogleGenAI;

  beforeAll(() => {
    ai = genai(stack.edge.url, gateway.token.key);
  });

  describe.each([
    ['gemini', 'gemini-2.5-flash'],
    ['openai', 'gpt-4o-mini'],
  ] as const)('on a %s channel', (provider, upstreamModel) => {
    let target: ProviderChannel;
    const embedder = `${provider}-genai-embed`;

    beforeAll(async () => {
      target = await providerChannel(gateway, {
        prefix: `genai-${provider}`,
        provider,
        upstreamModel,
        alsoServes: {
          [embedder]: provider === 'gemini' ? 'gemini-embedding-001' : 'text-embedding-3-small',
        },
      });
    });

    it('generates content, metered from its usage', async () => {
      const answer = await ai.models.generateContent({
        model: target.model,
        contents: 'hello from genai',
        config: { systemInstruction: 'Be brief.', temperature: 0.1 },
      });
      expect(answer.text).toBe('Echo: hello from genai');
      expect(await usageRow(stack, requestId(answer))).toMatchObject({
        endpoint: 'gemini.generate',
        promptTokens: answer.usageMetadata!.promptTokenCount,
        completionTokens: answer.usageMetadata!.candidatesTokenCount,
        status: 200,
        stream: false,
        channelId: target.channelId,
      });
    });

    it('streams content', async () => {
      const stream = await ai.models.generateContentStream({
        model: target.model,
        contents: 'stream from genai',
      });
      let text = '';
      let usage: { promptTokenCount?: number; candidatesTokenCount?: number } | undefined;
      for await (const chunk of stream) {
        text += chunk.text ?? '';
        usage = chunk.usageMetadata ?? usage;
      }
      expect(text).toBe('Echo: stream from genai');
      expect(await streamedUsageRow(stack, target.channelId)).toMatchObject({
        endpoint: 'gemini.generate',
        promptTokens: usage!.promptTokenCount,
        completionTokens: usage!.candidatesTokenCount,
        status: 200,
      });
    });

    it('answers with JSON that follows a responseSchema', async () => {
      const answer = await ai.models.generateContent({
        model: target.model,
        contents: 'a recipe',
        config: {
          responseMimeType: 'application/json',
          responseSchema: {
            type: Type.OBJECT,
            properties: { name: { type: Type.STRING }, minutes: { type: Type.INTEGER } },
            required: ['name', 'minutes'],
          },
        },
      });
      const recipe = JSON.parse(answer.text!) as { name: unknown; minutes: unknown };
      expect(typeof recipe.name).toBe('string');
      expect(Number.isInteger(recipe.minutes)).toBe(true);
      expect((await usageRow(stack, requestId(answer))).endpoint).toBe('gemini.generate');
    });

    it('counts tokens, for free', async () => {
      const count = await ai.models.countTokens({
        model: target.model,
        contents: 'how many tokens is this?',
      });
      expect(count.totalTokens).toBeGreaterThan(0);
      expect(await usageRow(stack, requestId(count))).toMatchObject({
        endpoint: 'gemini.count_tokens',
        cost: '0',
        channelId: target.channelId,
      });
    });

    it('embeds content', async () => {
      const answer = await ai.models.embedContent({
        model: embedder,
        contents: ['first text', 'second text'],
        config: { outputDimensionality: 8 },
      });
      expect(answer.embeddings).toHaveLength(2);
      expect(answer.embeddings![0]!.values).toHaveLength(8);
      const row = await usageRow(stack, requestId(answer));
      expect(row).toMatchObject({ endpoint: 'gemini.embed', status: 200, completionTokens: 0 });
      expect(row.promptTokens).toBeGreaterThan(0);
    });
  });

  it('lists the models the token may use', async () => {
    const names: string[] = [];
    for await (const model of await ai.models.list()) names.push(model.name!);
    expect(names.length).toBeGreaterThan(0);
    expect(names.every((name) => name.startsWith('models/'))).toBe(true);
  });

  it('raises an ApiError with the status, and the refusal is metered', async () => {
    const refused = ai.models.generateContent({ model: 'no-such-model', contents: 'hi' });
    await expect(refused).rejects.toBeInstanceOf(ApiError);
    await expect(refused).rejects.toMatchObject({ status: 404 });
    const [row] = await waitFor(
      async () => {
        const rows = await query<{ endpoint: string; status: number; cost: string }>(
          stack.databaseUrl,
          `SELECT endpoint, status, cost::text FROM "UsageLog" WHERE model = 'no-such-model'`,
        );
        return rows.length > 0 ? rows : undefined;
      },
      { what: 'the usage row of the refused request' },
    );
    expect(row).toMatchObject({ endpoint: 'gemini.generate', status: 404, cost: '0' });
    const unknownKey = genai(stack.edge.url, 'sk-not-a-token');
    await expect(
      unknownKey.models.generateContent({ model: 'no-such-model', contents: 'hi' }),
    ).rejects.toMatchObject({ status: 401 });
  });
});
