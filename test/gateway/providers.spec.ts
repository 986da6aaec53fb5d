import Anthropic from '@anthropic-ai/sdk';
import { waitFor, query } from '@switchyard/testing';
import type OpenAI from 'openai';
import {
  anthropicClient,
  lastSent,
  providerChannel,
  usageRow,
  useProviderGateway,
} from '../support/provider-gateway.js';
import { freshAccount, uniqueName } from '../support/stack.js';

// The openai SDK as the client, channels of other providers behind the gateway: the edge
// converts the request, the answer, the stream and the errors (docs/providers.md), and
// meters what the provider reported. Then the other way round: the anthropic SDK on
// /v1/messages, in front of an openai channel and an anthropic one.

describe('gateway: provider channels', () => {
  // One stack for every provider: each block adds its own channel, model and price.
  const gateway = useProviderGateway();
  const { stack } = gateway;

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
      ({ model, account, channelId } = await providerChannel(gateway, {
        prefix: 'claude',
        provider: 'anthropic',
        upstreamModel: 'claude-sonnet-4-5-20250929',
      }));
    });

    it('answers a chat completion from the Messages API, with usage and its usage row', async () => {
      const { data, response } = await gateway.openai.chat.completions
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
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
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
      const { data: stream, response } = await gateway.openai.chat.completions
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
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 6,
        completionTokens: 7,
        stream: true,
      });
    });

    it('meters a stream from the provider usage even without include_usage', async () => {
      const { data: stream, response } = await gateway.openai.chat.completions
        .create({ model, stream: true, messages: [{ role: 'user', content: 'no usage chunk' }] })
        .withResponse();
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.some((c) => c.usage)).toBe(false);
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 4,
        completionTokens: 5,
      });
    });

    it('round-trips a tool call: tool_calls out, the tool result back in', async () => {
      const question = { role: 'user' as const, content: 'weather in Paris?' };
      const first = await gateway.openai.chat.completions.create({
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

      const second = await gateway.openai.chat.completions.create({
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
      const stream = gateway.openai.chat.completions.stream({
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
      await gateway.openai.chat.completions.create({
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
        gateway.openai.chat.completions.create({
          model,
          n: 2,
          messages: [{ role: 'user', content: 'x' }],
        }),
      ).rejects.toMatchObject({ status: 400, param: 'n', code: 'invalid_request' });
      // An upstream 400 is the caller's: passed through, in OpenAI's error shape.
      await expect(
        gateway.openai.chat.completions.create({
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
      await stack.routable(gateway.token.key, shared);
      await stack.mockFault({ key: anthropicKey, status: 529, times: 1 });
      const { data, response } = await gateway.openai.chat.completions
        .create({ model: shared, messages: [{ role: 'user', content: 'anyone there?' }] })
        .withResponse();
      expect(data.choices[0]!.message.content).toBe('Echo: anyone there?');
      expect(data.id).toMatch(/^chatcmpl-[0-9a-f]+$/);
      expect((await stack.mockStats(anthropicKey)).failed).toBe(1);
      const row = await usageRow(stack, response.headers.get('x-request-id')!);
      expect(row.channelId).toBe(fallback.id);
    });
  });

  describe('azure', () => {
    let model: string;
    let embeddingModel: string;
    let account: string;
    let channelId: number;

    beforeAll(async () => {
      embeddingModel = uniqueName('embed-azure');
      ({ model, account, channelId } = await providerChannel(gateway, {
        prefix: 'gpt-azure',
        provider: 'azure',
        upstreamModel: 'gpt-4o-prod',
        providerSettings: { apiVersion: '2024-10-21' },
        alsoServes: { [embeddingModel]: 'embed-prod' },
      }));
    });

    it("answers from the deployment with OpenAI's body, keyed by api-key, with its usage row", async () => {
      const { data, response } = await gateway.openai.chat.completions
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
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
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
      const { data: stream, response } = await gateway.openai.chat.completions
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
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 6,
        completionTokens: 7,
        stream: true,
      });
    });

    it("meters a stream from Azure's count even when the client did not ask for usage", async () => {
      const { data: stream, response } = await gateway.openai.chat.completions
        .create({ model, stream: true, messages: [{ role: 'user', content: 'no usage chunk' }] })
        .withResponse();
      const chunks = await collect(stream);
      expect(chunks.some((c) => c.usage)).toBe(false);
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect(sent!.body.stream_options).toEqual({ include_usage: true });
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 4,
        completionTokens: 5,
        tokensCounted: false,
      });
    });

    it('round-trips a tool call and sends images as they came', async () => {
      const question = { role: 'user' as const, content: 'weather in Paris?' };
      const first = await gateway.openai.chat.completions.create({
        model,
        messages: [question],
        tools: [weather],
      });
      const call = first.choices[0]!.message
        .tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
      expect(first.choices[0]!.finish_reason).toBe('tool_calls');
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'example city' });
      const second = await gateway.openai.chat.completions.create({
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
      await gateway.openai.chat.completions.create({
        model,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, image] }],
      });
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect((sent!.body.messages as { content: unknown[] }[])[0]!.content[1]).toEqual(image);
    });

    it('embeds on the embeddings deployment, metered from its usage', async () => {
      const { data, response } = await gateway.openai.embeddings
        .create({ model: embeddingModel, input: ['one', 'two'] })
        .withResponse();
      expect(data.data.map((d) => d.embedding.length)).toEqual([8, 8]);
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect(sent!.path).toBe('/openai/deployments/embed-prod/embeddings?api-version=2024-10-21');
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
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
      await stack.routable(gateway.token.key, shared);
      await stack.mockFault({ key: azureKey, status: 404, times: 1 });
      const { data, response } = await gateway.openai.chat.completions
        .create({ model: shared, messages: [{ role: 'user', content: 'anyone there?' }] })
        .withResponse();
      expect(data.choices[0]!.message.content).toBe('Echo: anyone there?');
      expect((await stack.mockStats(azureKey)).failed).toBe(1);
      expect((await usageRow(stack, response.headers.get('x-request-id')!)).channelId).toBe(
        fallback.id,
      );
    });
  });

  describe('gemini', () => {
    let model: string;
    let embeddingModel: string;
    let account: string;
    let channelId: number;

    beforeAll(async () => {
      embeddingModel = uniqueName('embed-gemini');
      ({ model, account, channelId } = await providerChannel(gateway, {
        prefix: 'gemini',
        provider: 'gemini',
        // A Gemini 3 model: the mock refuses function calls sent back without their signature.
        upstreamModel: 'gemini-3-pro-preview',
        alsoServes: { [embeddingModel]: 'gemini-embedding-001' },
      }));
    });

    it('answers a chat completion from generateContent, with usage, cached tokens and its usage row', async () => {
      const { data, response } = await gateway.openai.chat.completions
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
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
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
      const { data: stream, response } = await gateway.openai.chat.completions
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
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 6,
        completionTokens: 7,
        stream: true,
      });
    });

    it('meters a stream from usageMetadata even without include_usage', async () => {
      const { data: stream, response } = await gateway.openai.chat.completions
        .create({ model, stream: true, messages: [{ role: 'user', content: 'no usage chunk' }] })
        .withResponse();
      const chunks = await collect(stream);
      expect(chunks.some((c) => c.usage)).toBe(false);
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 4,
        completionTokens: 5,
        tokensCounted: false,
      });
    });

    it('round-trips a tool call: functionCall out with its signature, functionResponse back in by name', async () => {
      const question = { role: 'user' as const, content: 'weather in Paris?' };
      const first = await gateway.openai.chat.completions.create({
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

      const second = await gateway.openai.chat.completions.create({
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
      const stream = gateway.openai.chat.completions.stream({
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
      await gateway.openai.chat.completions.create({
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
        gateway.openai.chat.completions.create({
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
      const { data, response } = await gateway.openai.embeddings
        .create({ model: embeddingModel, input: ['one', 'two'] })
        .withResponse();
      expect(data.data.map((d) => d.embedding.length)).toEqual([8, 8]);
      expect(Math.hypot(...data.data[0]!.embedding)).toBeCloseTo(1, 5);
      const [sent] = (await stack.mockRequests(account)).slice(-1);
      expect(sent!.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
      expect((await usageRow(stack, response.headers.get('x-request-id')!)).tokensCounted).toBe(
        true,
      );
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
      await stack.routable(gateway.token.key, shared);
      const { data, response } = await gateway.openai.chat.completions
        .create({ model: shared, messages: [{ role: 'user', content: 'anyone there?' }] })
        .withResponse();
      expect(data.choices[0]!.message.content).toBe('Echo: anyone there?');
      expect((await usageRow(stack, response.headers.get('x-request-id')!)).channelId).toBe(
        fallback.id,
      );
      const keyStatus = async (): Promise<string | undefined> =>
        (
          await query<{ status: string }>(
            stack.databaseUrl,
            'SELECT status FROM "ChannelKey" WHERE id = $1',
            [revoked.keyIds[0]],
          )
        )[0]?.status;
      await waitFor(async () => ((await keyStatus()) === 'auto_disabled' ? true : undefined), {
        what: 'the revoked key disabled',
      });
      // The router's probes ask in Gemini's format and read the 400 as a ban too: after two
      // of them (the first one's verdict is in once the second is sent) the key is still out.
      await waitFor(
        async () => ((await stack.mockRequests(revokedKey)).length >= 3 ? true : undefined),
        { what: 'two probes of the revoked key' },
      );
      expect(await keyStatus()).toBe('auto_disabled');
      await stack.mockAccount(revokedKey);
      await waitFor(async () => ((await keyStatus()) === 'enabled' ? true : undefined), {
        what: 'the key re-enabled by a probe once it works',
      });
    });

    it('fails over from a FAILED_PRECONDITION 400 (region not served) and counts it against the channel', async () => {
      const shared = uniqueName('shared-gemini');
      const blockedKey = await freshAccount(stack);
      const blocked = await stack.createChannel({
        models: [shared],
        keys: [blockedKey],
        provider: 'gemini',
        priority: 10,
      });
      const fallback = await stack.createChannel({
        models: [shared],
        keys: [await freshAccount(stack)],
      });
      await stack.routable(gateway.token.key, shared);
      // Three such failures open the channel's breaker, as server errors do; the rest keep the
      // router's probes (which read the body the same way) failing.
      await stack.mockFault({
        key: blockedKey,
        status: 400,
        body: JSON.stringify({
          error: {
            code: 400,
            message: 'User location is not supported for the API use.',
            status: 'FAILED_PRECONDITION',
          },
        }),
        times: 6,
      });
      for (const question of ['from far away', 'still far', 'farther still']) {
        const { data, response } = await gateway.openai.chat.completions
          .create({ model: shared, messages: [{ role: 'user', content: question }] })
          .withResponse();
        expect(data.choices[0]!.message.content).toBe(`Echo: ${question}`);
        expect((await usageRow(stack, response.headers.get('x-request-id')!)).channelId).toBe(
          fallback.id,
        );
      }
      expect((await stack.mockStats(blockedKey)).failed).toBeGreaterThanOrEqual(3);
      await stack.routingSettled(blocked.id, false);
    });

    it('serves /v1/messages too, converted twice: a stream with the cached input apart', async () => {
      const stream = gateway.anthropic.messages.stream({
        model,
        max_tokens: 50,
        system: 'Answer like a mock would.',
        messages: [{ role: 'user', content: 'hello gemini' }],
      });
      const { response } = await stream.withResponse();
      expect(await stream.finalMessage()).toMatchObject({
        model: 'gemini-3-pro-preview',
        content: [{ type: 'text', text: 'Echo: hello gemini' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 3, cache_read_input_tokens: 7, output_tokens: 5 },
      });
      expect((await stack.mockRequests(account)).at(-1)!.path).toBe(
        '/v1beta/models/gemini-3-pro-preview:streamGenerateContent?alt=sse',
      );
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        promptTokens: 10,
        completionTokens: 5,
        cachedTokens: 7,
        stream: true,
        channelId,
      });
    });

    it("renders Gemini's errors in OpenAI's shape", async () => {
      await stack.mockFault({ key: account, status: 400, times: 1 });
      await expect(
        gateway.openai.chat.completions.create({
          model,
          messages: [{ role: 'user', content: 'x' }],
        }),
      ).rejects.toMatchObject({
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_argument',
        error: { message: 'Request contains an invalid argument.' },
      });
    });
  });

  describe("Anthropic's API in front (/v1/messages)", () => {
    let gptModel: string;
    let gptAccount: string;
    let claudeModel: string;
    let claudeAccount: string;
    let claudeChannelId: number;

    /** Four characters a token, as the mock upstream counts. */
    const tokens = (text: string): number => Math.ceil(text.length / 4);

    const weatherTool: Anthropic.Tool = {
      name: 'get_weather',
      description: 'Weather in a city',
      input_schema: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
      },
    };

    beforeAll(async () => {
      ({ model: gptModel, account: gptAccount } = await providerChannel(gateway, {
        prefix: 'front-gpt',
        provider: 'openai',
        upstreamModel: 'gpt-4o-mini',
      }));
      ({
        model: claudeModel,
        account: claudeAccount,
        channelId: claudeChannelId,
      } = await providerChannel(gateway, {
        prefix: 'front-claude',
        provider: 'anthropic',
        upstreamModel: 'claude-sonnet-4-5-20250929',
      }));
    });

    describe('on an openai channel (converted both ways)', () => {
      it('answers with an Anthropic message from the chat completion, metered from its usage', async () => {
        // This SDK's types no longer list the sampling settings; the API still takes them.
        const sampling = { temperature: 0.3 };
        const { data, response } = await gateway.anthropic.messages
          .create({
            model: gptModel,
            max_tokens: 100,
            system: 'Be brief.',
            messages: [{ role: 'user', content: 'hello gpt' }],
            stop_sequences: ['END'],
            metadata: { user_id: 'user-7' },
            ...sampling,
          })
          .withResponse();
        const prompt = tokens('Be brief.\nhello gpt');
        const output = tokens('Echo: hello gpt');
        expect(data).toMatchObject({
          type: 'message',
          role: 'assistant',
          model: 'gpt-4o-mini',
          content: [{ type: 'text', text: 'Echo: hello gpt' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: prompt, output_tokens: output },
        });
        expect(data.id).toMatch(/^msg_/);
        const sent = await lastSent(stack, gptAccount);
        // Logged under the channel's key; the client's gateway token goes no further.
        expect(sent.path).toBe('/v1/chat/completions');
        expect(sent.headers['x-api-key']).toBeUndefined();
        expect(sent.body).toEqual({
          model: 'gpt-4o-mini',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'hello gpt' },
          ],
          max_tokens: 100,
          stop: ['END'],
          temperature: 0.3,
          user: 'user-7',
        });
        expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
          promptTokens: prompt,
          completionTokens: output,
          status: 200,
          stream: false,
        });
      });

      it("streams Anthropic's event sequence, which the SDK's stream helper assembles, with the final usage", async () => {
        const stream = gateway.anthropic.messages.stream({
          model: gptModel,
          max_tokens: 50,
          messages: [{ role: 'user', content: 'stream me please' }],
        });
        const seen: string[] = [];
        stream.on('streamEvent', (event) => seen.push(event.type));
        const { response } = await stream.withResponse();
        const final = await stream.finalMessage();
        const output = tokens('Echo: stream me please');
        expect(final).toMatchObject({
          role: 'assistant',
          content: [{ type: 'text', text: 'Echo: stream me please' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: tokens('stream me please'), output_tokens: output },
        });
        expect(seen[0]).toBe('message_start');
        expect(seen[1]).toBe('content_block_start');
        expect(seen.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
        expect(seen.filter((type) => type === 'content_block_delta').length).toBeGreaterThan(1);
        expect((await lastSent(stack, gptAccount)).body).toMatchObject({
          stream: true,
          stream_options: { include_usage: true },
        });
        expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
          promptTokens: tokens('stream me please'),
          completionTokens: output,
          stream: true,
        });
      });

      it('round-trips a tool call: tool_use streamed out as argument deltas, tool_result back in', async () => {
        const question: Anthropic.MessageParam = { role: 'user', content: 'weather in Paris?' };
        const first = await gateway.anthropic.messages
          .stream({
            model: gptModel,
            max_tokens: 100,
            messages: [question],
            tools: [weatherTool],
            tool_choice: { type: 'any' },
          })
          .finalMessage();
        expect(first.stop_reason).toBe('tool_use');
        const call = first.content[0] as Anthropic.ToolUseBlock;
        expect(call).toMatchObject({
          type: 'tool_use',
          name: 'get_weather',
          input: { city: 'example city' },
        });
        expect((await lastSent(stack, gptAccount)).body.tool_choice).toBe('required');

        const second = await gateway.anthropic.messages.create({
          model: gptModel,
          max_tokens: 100,
          tools: [weatherTool],
          messages: [
            question,
            { role: 'assistant', content: first.content },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: call.id, content: '18 degrees and sunny' },
              ],
            },
          ],
        });
        expect(second).toMatchObject({
          stop_reason: 'end_turn',
          content: [{ type: 'text', text: 'The tool answered: 18 degrees and sunny' }],
        });
        expect(((await lastSent(stack, gptAccount)).body.messages as unknown[]).slice(1)).toEqual([
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: call.id,
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"example city"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: call.id, content: '18 degrees and sunny' },
        ]);
      });

      it('refuses what has no OpenAI equivalent with a 400 the SDK raises as BadRequestError', async () => {
        const refused = gateway.anthropic.messages.create({
          model: gptModel,
          max_tokens: 10,
          messages: [
            {
              role: 'user',
              content: [
                {
                  type: 'document',
                  source: { type: 'text', media_type: 'text/plain', data: 'a contract' },
                },
              ],
            },
          ],
        });
        await expect(refused).rejects.toBeInstanceOf(Anthropic.BadRequestError);
        await expect(refused).rejects.toMatchObject({
          status: 400,
          error: {
            type: 'error',
            error: {
              type: 'invalid_request_error',
              message: expect.stringContaining('`document`'),
            },
          },
        });
      });
    });

    describe('on an anthropic channel (passed through)', () => {
      it('relays the body as sent (model renamed) and the answer as given, metered with its cache reads', async () => {
        const request = {
          model: claudeModel,
          max_tokens: 64,
          system: [{ type: 'text' as const, text: 'You are a careful mock.' }],
          messages: [{ role: 'user' as const, content: 'hello claude' }],
          top_k: 5,
        };
        const { data, response } = await gateway.anthropic.messages
          .create(request, { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } })
          .withResponse();
        const cached = tokens('You are a careful mock.');
        const input = tokens('hello claude');
        const output = tokens('Echo: hello claude');
        expect(data).toMatchObject({
          model: 'claude-sonnet-4-5-20250929',
          content: [{ type: 'text', text: 'Echo: hello claude' }],
          stop_reason: 'end_turn',
          usage: {
            input_tokens: input,
            output_tokens: output,
            cache_read_input_tokens: cached,
            cache_creation_input_tokens: 0,
          },
        });
        expect(data.id).toMatch(/^msg_[0-9a-f]+$/);
        const sent = await lastSent(stack, claudeAccount);
        expect(sent.path).toBe('/v1/messages');
        expect(sent.headers['anthropic-version']).toBe('2023-06-01');
        expect(sent.headers['anthropic-beta']).toBe('context-1m-2025-08-07');
        expect(sent.headers.authorization).toBeUndefined();
        expect(sent.body).toEqual({ ...request, model: 'claude-sonnet-4-5-20250929' });
        expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
          promptTokens: input + cached,
          completionTokens: output,
          cachedTokens: cached,
          status: 200,
          stream: false,
          channelId: claudeChannelId,
        });
      });

      it('relays the stream as the provider sent it, metered from its events', async () => {
        const stream = gateway.anthropic.messages.stream({
          model: claudeModel,
          max_tokens: 64,
          system: 'Stream, mock.',
          messages: [{ role: 'user', content: 'stream claude' }],
        });
        const seen: string[] = [];
        stream.on('streamEvent', (event) => seen.push(event.type));
        const { response } = await stream.withResponse();
        const final = await stream.finalMessage();
        expect(final.content).toEqual([{ type: 'text', text: 'Echo: stream claude' }]);
        expect(seen.slice(-2)).toEqual(['message_delta', 'message_stop']);
        // Nothing rewritten: the provider's own ping events come through too.
        const raw = await fetch(`${stack.edge.url}/v1/messages`, {
          method: 'POST',
          headers: { 'x-api-key': gateway.token.key, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: claudeModel,
            max_tokens: 64,
            stream: true,
            messages: [{ role: 'user', content: 'ping me' }],
          }),
        });
        expect(raw.headers.get('content-type')).toContain('text/event-stream');
        expect(await raw.text()).toContain('event: ping\ndata: {"type":"ping"}\n\n');
        expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
          promptTokens: tokens('stream claude') + tokens('Stream, mock.'),
          completionTokens: tokens('Echo: stream claude'),
          cachedTokens: tokens('Stream, mock.'),
          stream: true,
        });
      });

      it('round-trips a tool call, and relays the upstream 400 as the BadRequestError it is', async () => {
        const question: Anthropic.MessageParam = { role: 'user', content: 'weather?' };
        const first = await gateway.anthropic.messages.create({
          model: claudeModel,
          max_tokens: 64,
          messages: [question],
          tools: [weatherTool],
        });
        const call = first.content[0] as Anthropic.ToolUseBlock;
        expect(first.stop_reason).toBe('tool_use');
        expect(call.input).toEqual({ city: 'example city' });
        const second = await gateway.anthropic.messages.create({
          model: claudeModel,
          max_tokens: 64,
          tools: [weatherTool],
          messages: [
            question,
            { role: 'assistant', content: first.content },
            {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: call.id, content: 'sunny' }],
            },
          ],
        });
        expect(second.content).toEqual([{ type: 'text', text: 'Echo: sunny' }]);

        const orphan = gateway.anthropic.messages.create({
          model: claudeModel,
          max_tokens: 64,
          messages: [
            {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: 'toolu_unknown', content: 'x' }],
            },
          ],
        });
        await expect(orphan).rejects.toBeInstanceOf(Anthropic.BadRequestError);
        await expect(orphan).rejects.toMatchObject({
          error: { error: { message: expect.stringContaining('without a preceding tool_use') } },
        });
      });
    });

    it('fails over from an overloaded (529) anthropic channel to an openai channel converting the stream', async () => {
      const shared = uniqueName('front-shared');
      const anthropicKey = await freshAccount(stack);
      const openaiKey = await freshAccount(stack);
      await stack.createChannel({
        models: [shared],
        keys: [anthropicKey],
        provider: 'anthropic',
        priority: 10,
      });
      const fallback = await stack.createChannel({ models: [shared], keys: [openaiKey] });
      await stack.routable(gateway.token.key, shared);
      await stack.mockFault({ key: anthropicKey, status: 529, times: 1 });
      const stream = gateway.anthropic.messages.stream({
        model: shared,
        max_tokens: 20,
        messages: [{ role: 'user', content: 'anyone there?' }],
      });
      const { response } = await stream.withResponse();
      expect((await stream.finalMessage()).content).toEqual([
        { type: 'text', text: 'Echo: anyone there?' },
      ]);
      expect((await stack.mockStats(anthropicKey)).failed).toBe(1);
      expect((await usageRow(stack, response.headers.get('x-request-id')!)).channelId).toBe(
        fallback.id,
      );
    });

    it("ends a converted stream cut by the upstream with Anthropic's error event, which the SDK raises", async () => {
      const cutKey = await freshAccount(stack);
      const cutModel = uniqueName('front-cut');
      await stack.createChannel({ models: [cutModel], keys: [cutKey] });
      await stack.routable(gateway.token.key, cutModel);
      await stack.mockFault({ key: cutKey, disconnectAfterChunks: 2, times: 1 });
      const stream = gateway.anthropic.messages.stream({
        model: cutModel,
        max_tokens: 20,
        messages: [{ role: 'user', content: 'a long answer, cut short' }],
      });
      const failed = stream.finalMessage();
      await expect(failed).rejects.toBeInstanceOf(Anthropic.APIError);
      await expect(failed).rejects.toThrow(/The upstream stream was interrupted/);
    });

    it("takes the token as x-api-key or Bearer, and gives Anthropic's errors the SDK raises by class", async () => {
      const bearer = anthropicClient(stack, gateway.token.key, { bearer: true });
      const answered = await bearer.messages.create({
        model: gptModel,
        max_tokens: 10,
        messages: [{ role: 'user', content: 'by bearer' }],
      });
      expect(answered.content).toEqual([{ type: 'text', text: 'Echo: by bearer' }]);

      const stranger = anthropicClient(stack, 'sk-not-ours');
      const unauthenticated = stranger.messages.create({
        model: gptModel,
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
      });
      await expect(unauthenticated).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
      await expect(unauthenticated).rejects.toMatchObject({
        status: 401,
        error: { type: 'error', error: { type: 'authentication_error' } },
      });

      const invalid = gateway.anthropic.messages.create({
        model: gptModel,
        messages: [{ role: 'user', content: 'x' }],
      } as unknown as Anthropic.MessageCreateParamsNonStreaming);
      await expect(invalid).rejects.toBeInstanceOf(Anthropic.BadRequestError);
      await expect(invalid).rejects.toMatchObject({
        status: 400,
        error: {
          error: {
            type: 'invalid_request_error',
            message: "'max_tokens' is required and must be a positive integer.",
          },
        },
      });

      const malformed = await fetch(`${stack.edge.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': gateway.token.key, 'content-type': 'application/json' },
        body: '{"model":',
      });
      expect(malformed.status).toBe(400);
      expect(await malformed.json()).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error' },
      });

      await expect(
        gateway.anthropic.messages.create({
          model: 'no-such-model',
          max_tokens: 10,
          messages: [{ role: 'user', content: 'x' }],
        }),
      ).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    });
  });
});
