import { eventually, query } from '@switchyard/testing';
import type OpenAI from 'openai';
import { freshAccount, Stack, uniqueName } from '../support/stack.js';

// The openai SDK as the client, channels of other providers behind the gateway: the edge
// converts the request, the answer, the stream and the errors (docs/providers.md), and
// meters what the provider reported.

interface UsageRow {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  tokensCounted: boolean;
  cost: string;
  status: number;
  stream: boolean;
  channelId: number;
}

describe('gateway: provider channels', () => {
  // One stack for every provider: each block adds its own channel, model and price.
  const stack = new Stack({ metering: true });
  let token: { id: number; key: string };
  let client: OpenAI;

  beforeAll(async () => {
    await stack.start();
    token = await stack.createToken();
    client = stack.client(token.key);
  });

  afterAll(() => stack.stop());

  /** A model of its own, priced per million tokens: 1 USD in, 0.10 USD cached in, 2 USD out. */
  async function pricedModel(prefix: string): Promise<string> {
    const model = uniqueName(prefix);
    await query(
      stack.databaseUrl,
      `INSERT INTO "ModelPrice" (model, "inputPrice", "outputPrice", "cachedInputPrice", "updatedAt")
       VALUES ($1, 1000000, 2000000, 100000, now())`,
      [model],
    );
    await stack.publish('price.changed', { model });
    return model;
  }

  async function usageRow(requestId: string): Promise<UsageRow> {
    return eventually(
      async () =>
        (
          await query<UsageRow>(
            stack.databaseUrl,
            `SELECT "promptTokens", "completionTokens", "cachedTokens", "tokensCounted", cost::text, status, stream, "channelId"
             FROM "UsageLog" WHERE "requestId" = $1`,
            [requestId],
          )
        )[0],
      5_000,
      `usage row ${requestId}`,
    );
  }

  async function collect(
    stream: AsyncIterable<OpenAI.ChatCompletionChunk>,
  ): Promise<OpenAI.ChatCompletionChunk[]> {
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    return chunks;
  }

  const weather: OpenAI.ChatCompletionTool = {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  };

  describe('anthropic', () => {
    let model: string;
    let account: string;
    let channelId: number;

    beforeAll(async () => {
      model = await pricedModel('claude');
      account = await freshAccount(stack);
      channelId = (
        await stack.createChannel({
          models: [model],
          keys: [account],
          provider: 'anthropic',
          modelMapping: { [model]: 'claude-sonnet-4-5-20250929' },
        })
      ).id;
      await stack.routable(token.key, model);
    });

    it('answers a chat completion from the Messages API, with usage and its usage row', async () => {
      const { data, response } = await client.chat.completions
        .create({
          model,
          messages: [
            { role: 'system', content: 'Answer like a mock would.' },
            { role: 'user', content: 'hello claude' },
          ],
          temperature: 0.5,
          stop: ['END'],
        })
        .withResponse();
      expect(data).toMatchObject({
        object: 'chat.completion',
        model: 'claude-sonnet-4-5-20250929',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Echo: hello claude' },
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
      expect(data.usage?.prompt_tokens_details?.cached_tokens).toBe(7);

      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect(sent!.path).toBe('/v1/messages');
      expect(sent!.headers['anthropic-version']).toBe('2023-06-01');
      expect(sent!.headers.authorization).toBeUndefined();
      expect(sent!.body).toEqual({
        model: 'claude-sonnet-4-5-20250929',
        system: [{ type: 'text', text: 'Answer like a mock would.' }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hello claude' }] }],
        max_tokens: 64_000,
        temperature: 0.5,
        stop_sequences: ['END'],
      });
      expect(await usageRow(response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 10,
        completionTokens: 5,
        cachedTokens: 7,
        // 3 uncached * 1 + 7 cached * 0.1 + 5 * 2 micro-dollars = 13.7, rounded up.
        cost: '14',
        status: 200,
        stream: false,
        channelId,
      });
    });

    it('streams OpenAI chunks ending with the include_usage chunk and [DONE]', async () => {
      const { data: stream, response } = await client.chat.completions
        .create({
          model,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'stream me three words' }],
        })
        .withResponse();
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(
        'Echo: stream me three words',
      );
      expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
      expect(chunks.at(-1)).toMatchObject({
        choices: [],
        usage: { prompt_tokens: 6, completion_tokens: 7, total_tokens: 13 },
      });
      expect(await usageRow(response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 6,
        completionTokens: 7,
        stream: true,
      });
    });

    it('meters a stream from the provider usage even without include_usage', async () => {
      const { data: stream, response } = await client.chat.completions
        .create({ model, stream: true, messages: [{ role: 'user', content: 'no usage chunk' }] })
        .withResponse();
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.some((c) => c.usage)).toBe(false);
      expect(await usageRow(response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 4,
        completionTokens: 5,
      });
    });

    it('round-trips a tool call: tool_calls out, the tool result back in', async () => {
      const question = { role: 'user' as const, content: 'weather in Paris?' };
      const first = await client.chat.completions.create({
        model,
        messages: [question],
        tools: [weather],
        tool_choice: 'required',
      });
      const choice = first.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      const call = choice.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'example city' });

      const second = await client.chat.completions.create({
        model,
        tools: [weather],
        messages: [
          question,
          choice.message,
          { role: 'tool', tool_call_id: call.id, content: '18 degrees and sunny' },
        ],
      });
      expect(second.choices[0]).toMatchObject({
        finish_reason: 'stop',
        message: { content: 'Echo: 18 degrees and sunny' },
      });
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect(sent!.body.tool_choice).toBeUndefined();
      expect((sent!.body.messages as unknown[]).slice(1)).toEqual([
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: call.id, name: 'get_weather', input: { city: 'example city' } },
          ],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: call.id, content: '18 degrees and sunny' }],
        },
      ]);
    });

    it('streams a tool call whose argument deltas the SDK reassembles', async () => {
      const stream = client.chat.completions.stream({
        model,
        messages: [{ role: 'user', content: 'weather?' }],
        tools: [weather],
      });
      const final = await stream.finalChatCompletion();
      const call = final.choices[0]!.message
        .tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(final.choices[0]!.finish_reason).toBe('tool_calls');
      expect(call.id).toMatch(/^toolu_/);
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'example city' });
    });

    it('sends images as image blocks', async () => {
      await client.chat.completions.create({
        model,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ],
          },
        ],
      });
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect((sent!.body.messages as { content: unknown[] }[])[0]!.content[1]).toEqual({
        type: 'image',
        source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
      });
    });

    it("refuses what Anthropic cannot do with OpenAI's 400, and renders its errors in OpenAI's shape", async () => {
      await expect(
        client.chat.completions.create({ model, n: 2, messages: [{ role: 'user', content: 'x' }] }),
      ).rejects.toMatchObject({ status: 400, param: 'n', code: 'invalid_request' });
      // An upstream 400 is the caller's: passed through, in OpenAI's error shape.
      await expect(
        client.chat.completions.create({
          model,
          messages: [
            { role: 'user', content: 'x' },
            { role: 'tool', tool_call_id: 'toolu_unknown', content: 'orphan result' },
          ],
        }),
      ).rejects.toMatchObject({
        status: 400,
        type: 'invalid_request_error',
        message: expect.stringContaining('without a preceding tool_use'),
      });
    });

    it('fails over from an overloaded (529) anthropic channel to an openai channel, converting as it goes', async () => {
      const shared = uniqueName('shared');
      const anthropicKey = await freshAccount(stack);
      const openaiKey = await freshAccount(stack);
      await stack.createChannel({
        models: [shared],
        keys: [anthropicKey],
        provider: 'anthropic',
        priority: 10,
      });
      const fallback = await stack.createChannel({ models: [shared], keys: [openaiKey] });
      await stack.routable(token.key, shared);
      await stack.mockFault({ key: anthropicKey, status: 529, times: 1 });
      const { data, response } = await client.chat.completions
        .create({ model: shared, messages: [{ role: 'user', content: 'anyone there?' }] })
        .withResponse();
      expect(data.choices[0]!.message.content).toBe('Echo: anyone there?');
      expect(data.id).toMatch(/^chatcmpl-[0-9a-f]+$/);
      expect((await stack.mockStats(anthropicKey)).failed).toBe(1);
      const row = await usageRow(response.headers.get('x-request-id')!);
      expect(row.channelId).toBe(fallback.id);
    });
  });

  describe('azure', () => {
    let model: string;
    let embeddingModel: string;
    let account: string;
    let channelId: number;

    beforeAll(async () => {
      model = await pricedModel('gpt-azure');
      embeddingModel = uniqueName('embed-azure');
      account = await freshAccount(stack);
      channelId = (
        await stack.createChannel({
          models: [model, embeddingModel],
          keys: [account],
          provider: 'azure',
          providerSettings: { apiVersion: '2024-10-21' },
          modelMapping: { [model]: 'gpt-4o-prod', [embeddingModel]: 'embed-prod' },
        })
      ).id;
      await stack.routable(token.key, model);
    });

    it("answers from the deployment with OpenAI's body, keyed by api-key, with its usage row", async () => {
      const { data, response } = await client.chat.completions
        .create({
          model,
          messages: [
            { role: 'system', content: 'Answer like a mock would.' },
            { role: 'user', content: 'hello azure' },
          ],
          temperature: 0.5,
        })
        .withResponse();
      expect(data).toMatchObject({
        model: 'gpt-4o-prod',
        choices: [{ message: { content: 'Echo: hello azure' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect(sent!.path).toBe(
        '/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21',
      );
      expect(sent!.headers.authorization).toBeUndefined();
      expect(sent!.body).toEqual({
        model: 'gpt-4o-prod',
        messages: [
          { role: 'system', content: 'Answer like a mock would.' },
          { role: 'user', content: 'hello azure' },
        ],
        temperature: 0.5,
      });
      expect(await usageRow(response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 10,
        completionTokens: 5,
        cachedTokens: 0,
        tokensCounted: false,
        cost: '20',
        stream: false,
        channelId,
      });
    });

    it('streams without the prompt-filter announcement, ending with the include_usage chunk', async () => {
      const { data: stream, response } = await client.chat.completions
        .create({
          model,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'stream me three words' }],
        })
        .withResponse();
      const chunks = await collect(stream);
      expect(chunks[0]!.choices[0]!.delta).toMatchObject({ role: 'assistant' });
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(
        'Echo: stream me three words',
      );
      expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
      expect(chunks.at(-1)).toMatchObject({
        choices: [],
        usage: { prompt_tokens: 6, completion_tokens: 7, total_tokens: 13 },
      });
      expect(await usageRow(response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 6,
        completionTokens: 7,
        stream: true,
      });
    });

    it("meters a stream from Azure's count even when the client did not ask for usage", async () => {
      const { data: stream, response } = await client.chat.completions
        .create({ model, stream: true, messages: [{ role: 'user', content: 'no usage chunk' }] })
        .withResponse();
      const chunks = await collect(stream);
      expect(chunks.some((c) => c.usage)).toBe(false);
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect(sent!.body.stream_options).toEqual({ include_usage: true });
      expect(await usageRow(response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 4,
        completionTokens: 5,
        tokensCounted: false,
      });
    });

    it('round-trips a tool call and sends images as they came', async () => {
      const question = { role: 'user' as const, content: 'weather in Paris?' };
      const first = await client.chat.completions.create({
        model,
        messages: [question],
        tools: [weather],
      });
      const call = first.choices[0]!.message
        .tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(first.choices[0]!.finish_reason).toBe('tool_calls');
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'example city' });
      const second = await client.chat.completions.create({
        model,
        tools: [weather],
        messages: [
          question,
          first.choices[0]!.message,
          { role: 'tool', tool_call_id: call.id, content: '18 degrees and sunny' },
        ],
      });
      expect(second.choices[0]!.message.content).toBe('The tool answered: 18 degrees and sunny');

      const image = {
        type: 'image_url' as const,
        image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' },
      };
      await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, image] }],
      });
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect((sent!.body.messages as { content: unknown[] }[])[0]!.content[1]).toEqual(image);
    });

    it('embeds on the embeddings deployment, metered from its usage', async () => {
      const { data, response } = await client.embeddings
        .create({ model: embeddingModel, input: ['one', 'two'] })
        .withResponse();
      expect(data.data.map((d) => d.embedding.length)).toEqual([8, 8]);
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect(sent!.path).toBe('/openai/deployments/embed-prod/embeddings?api-version=2024-10-21');
      expect(await usageRow(response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 2,
        tokensCounted: false,
      });
    });

    it('fails over from a missing deployment (404 DeploymentNotFound) to the next channel', async () => {
      const shared = uniqueName('shared-azure');
      const azureKey = await freshAccount(stack);
      await stack.createChannel({
        models: [shared],
        keys: [azureKey],
        provider: 'azure',
        priority: 10,
      });
      const fallback = await stack.createChannel({
        models: [shared],
        keys: [await freshAccount(stack)],
      });
      await stack.routable(token.key, shared);
      await stack.mockFault({ key: azureKey, status: 404, times: 1 });
      const { data, response } = await client.chat.completions
        .create({ model: shared, messages: [{ role: 'user', content: 'anyone there?' }] })
        .withResponse();
      expect(data.choices[0]!.message.content).toBe('Echo: anyone there?');
      expect((await stack.mockStats(azureKey)).failed).toBe(1);
      expect((await usageRow(response.headers.get('x-request-id')!)).channelId).toBe(fallback.id);
    });
  });

  describe('gemini', () => {
    let model: string;
    let embeddingModel: string;
    let account: string;
    let channelId: number;

    beforeAll(async () => {
      model = await pricedModel('gemini');
      embeddingModel = uniqueName('embed-gemini');
      account = await freshAccount(stack);
      channelId = (
        await stack.createChannel({
          models: [model, embeddingModel],
          keys: [account],
          provider: 'gemini',
          // A Gemini 3 model: the mock refuses function calls sent back without their signature.
          modelMapping: {
            [model]: 'gemini-3-pro-preview',
            [embeddingModel]: 'gemini-embedding-001',
          },
        })
      ).id;
      await stack.routable(token.key, model);
    });

    it('answers a chat completion from generateContent, with usage, cached tokens and its usage row', async () => {
      const { data, response } = await client.chat.completions
        .create({
          model,
          messages: [
            { role: 'system', content: 'Answer like a mock would.' },
            { role: 'user', content: 'hello gemini' },
          ],
          temperature: 0.5,
          stop: ['END'],
        })
        .withResponse();
      expect(data).toMatchObject({
        object: 'chat.completion',
        model: 'gemini-3-pro-preview',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Echo: hello gemini' },
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
      });
      expect(data.usage?.prompt_tokens_details?.cached_tokens).toBe(7);
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect(sent!.path).toBe('/v1beta/models/gemini-3-pro-preview:generateContent');
      expect(sent!.headers.authorization).toBeUndefined();
      expect(sent!.body).toEqual({
        systemInstruction: { parts: [{ text: 'Answer like a mock would.' }] },
        contents: [{ role: 'user', parts: [{ text: 'hello gemini' }] }],
        generationConfig: { temperature: 0.5, stopSequences: ['END'] },
      });
      expect(await usageRow(response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 10,
        completionTokens: 5,
        cachedTokens: 7,
        tokensCounted: false,
        // 3 uncached * 1 + 7 cached * 0.1 + 5 * 2 micro-dollars = 13.7, rounded up.
        cost: '14',
        stream: false,
        channelId,
      });
    });

    it('streams OpenAI chunks from server-sent events, ending with the include_usage chunk and [DONE]', async () => {
      const { data: stream, response } = await client.chat.completions
        .create({
          model,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'stream me three words' }],
        })
        .withResponse();
      const chunks = await collect(stream);
      expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(
        'Echo: stream me three words',
      );
      expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
      expect(chunks.at(-1)).toMatchObject({
        choices: [],
        usage: { prompt_tokens: 6, completion_tokens: 7, total_tokens: 13 },
      });
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect(sent!.path).toBe('/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse');
      expect(await usageRow(response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 6,
        completionTokens: 7,
        stream: true,
      });
    });

    it('meters a stream from usageMetadata even without include_usage', async () => {
      const { data: stream, response } = await client.chat.completions
        .create({ model, stream: true, messages: [{ role: 'user', content: 'no usage chunk' }] })
        .withResponse();
      const chunks = await collect(stream);
      expect(chunks.some((c) => c.usage)).toBe(false);
      expect(await usageRow(response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 4,
        completionTokens: 5,
        tokensCounted: false,
      });
    });

    it('round-trips a tool call: functionCall out with its signature, functionResponse back in by name', async () => {
      const question = { role: 'user' as const, content: 'weather in Paris?' };
      const first = await client.chat.completions.create({
        model,
        messages: [question],
        tools: [weather],
        tool_choice: 'required',
      });
      const choice = first.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      const call = choice.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'example city' });

      const second = await client.chat.completions.create({
        model,
        tools: [weather],
        messages: [
          question,
          choice.message,
          { role: 'tool', tool_call_id: call.id, content: '18 degrees and sunny' },
        ],
      });
      expect(second.choices[0]).toMatchObject({
        finish_reason: 'stop',
        message: { content: 'Echo: 18 degrees and sunny' },
      });
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect(sent!.body.toolConfig).toBeUndefined();
      expect((sent!.body.contents as unknown[]).slice(1)).toEqual([
        {
          role: 'model',
          parts: [
            {
              functionCall: { name: 'get_weather', args: { city: 'example city' } },
              thoughtSignature: Buffer.from('mock-signature:get_weather').toString('base64'),
            },
          ],
        },
        {
          role: 'user',
          parts: [
            {
              functionResponse: {
                name: 'get_weather',
                response: { output: '18 degrees and sunny' },
              },
            },
          ],
        },
      ]);
    });

    it('streams a tool call the SDK assembles', async () => {
      const stream = client.chat.completions.stream({
        model,
        messages: [{ role: 'user', content: 'weather?' }],
        tools: [weather],
      });
      const final = await stream.finalChatCompletion();
      const call = final.choices[0]!.message
        .tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(final.choices[0]!.finish_reason).toBe('tool_calls');
      expect(call.id).toMatch(/^call_.+:sig:/);
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'example city' });
    });

    it('sends data-URL images inline and refuses http image URLs with a 400 naming the part', async () => {
      await client.chat.completions.create({
        model,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ],
          },
        ],
      });
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect((sent!.body.contents as { parts: unknown[] }[])[0]!.parts[1]).toEqual({
        inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' },
      });
      await expect(
        client.chat.completions.create({
          model,
          messages: [
            {
              role: 'user',
              content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }],
            },
          ],
        }),
      ).rejects.toMatchObject({
        status: 400,
        code: 'invalid_request',
        param: 'messages[0].content[0]',
      });
    });

    it('embeds with batchEmbedContents, in the base64 the SDK asks for, counted by the tokenizer', async () => {
      const { data, response } = await client.embeddings
        .create({ model: embeddingModel, input: ['one', 'two'] })
        .withResponse();
      expect(data.data.map((d) => d.embedding.length)).toEqual([8, 8]);
      expect(Math.hypot(...data.data[0]!.embedding)).toBeCloseTo(1, 5);
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect(sent!.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
      expect((await usageRow(response.headers.get('x-request-id')!)).tokensCounted).toBe(true);
    });

    it('bans a revoked key (400 API_KEY_INVALID), fails over, and keeps it out until the key works again', async () => {
      const shared = uniqueName('shared-gemini');
      const revokedKey = uniqueName('AIza-revoked');
      const revoked = await stack.createChannel({
        models: [shared],
        keys: [revokedKey],
        provider: 'gemini',
        priority: 10,
      });
      const fallback = await stack.createChannel({
        models: [shared],
        keys: [await freshAccount(stack)],
      });
      await stack.routable(token.key, shared);
      const { data, response } = await client.chat.completions
        .create({ model: shared, messages: [{ role: 'user', content: 'anyone there?' }] })
        .withResponse();
      expect(data.choices[0]!.message.content).toBe('Echo: anyone there?');
      expect((await usageRow(response.headers.get('x-request-id')!)).channelId).toBe(fallback.id);
      const keyStatus = async (): Promise<string | undefined> =>
        (
          await query<{ status: string }>(
            stack.databaseUrl,
            'SELECT status FROM "ChannelKey" WHERE id = $1',
            [revoked.keyIds[0]],
          )
        )[0]?.status;
      await eventually(
        async () => ((await keyStatus()) === 'auto_disabled' ? true : undefined),
        5_000,
        'the revoked key disabled',
      );
      // The router's probes ask in Gemini's format and read the 400 as a ban too: after two
      // of them (the first one's verdict is in once the second is sent) the key is still out.
      await eventually(
        async () => ((await stack.mockRequests(revokedKey)).length >= 3 ? true : undefined),
        5_000,
        'two probes of the revoked key',
      );
      expect(await keyStatus()).toBe('auto_disabled');
      await stack.mockAccount(revokedKey);
      await eventually(
        async () => ((await keyStatus()) === 'enabled' ? true : undefined),
        5_000,
        'the key re-enabled by a probe once it works',
      );
    });

    it("renders Gemini's errors in OpenAI's shape", async () => {
      await stack.mockFault({ key: account, status: 400, times: 1 });
      await expect(
        client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] }),
      ).rejects.toMatchObject({
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_argument',
        error: { message: 'Request contains an invalid argument.' },
      });
    });
  });
});
