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
  cost: string;
  status: number;
  stream: boolean;
  channelId: number;
}

describe('gateway: anthropic channels', () => {
  const stack = new Stack({ metering: true });
  let token: { id: number; key: string };
  let client: OpenAI;
  let model: string;
  let account: string;
  let channelId: number;

  beforeAll(async () => {
    await stack.start();
    token = await stack.createToken();
    client = stack.client(token.key);
    model = uniqueName('claude');
    // Per million tokens: 1 USD in, 0.10 USD cached in, 2 USD out.
    await query(
      stack.databaseUrl,
      `INSERT INTO "ModelPrice" (model, "inputPrice", "outputPrice", "cachedInputPrice", "updatedAt")
       VALUES ($1, 1000000, 2000000, 100000, now())`,
      [model],
    );
    await stack.publish('price.changed', { model });
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

  afterAll(() => stack.stop());

  async function usageRow(requestId: string): Promise<UsageRow> {
    return eventually(
      async () =>
        (
          await query<UsageRow>(
            stack.databaseUrl,
            `SELECT "promptTokens", "completionTokens", "cachedTokens", cost::text, status, stream, "channelId"
             FROM "UsageLog" WHERE "requestId" = $1`,
            [requestId],
          )
        )[0],
      5_000,
      `usage row ${requestId}`,
    );
  }

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

  const weather: OpenAI.ChatCompletionTool = {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  };

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
