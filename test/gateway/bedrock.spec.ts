import { waitFor, query } from '@switchyard/testing';
import type OpenAI from 'openai';
import {
  freshKeyPair,
  providerChannel,
  usageRow,
  useProviderGateway,
} from '../support/provider-gateway.js';
import { freshAccount, uniqueName } from '../support/stack.js';

// The openai SDK as the client, a bedrock channel behind the gateway: the edge converts to
// Converse, signs with the channel's key pair (which the mock verifies with the account's
// secret), decodes ConverseStream's binary frames and meters what Bedrock reported
// (docs/providers.md).

const UPSTREAM_MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';

describe('gateway: bedrock channels', () => {
  const gateway = useProviderGateway();
  const { stack } = gateway;
  let model: string;
  let account: string;
  let channelId: number;

  beforeAll(async () => {
    ({ model, account, channelId } = await providerChannel(gateway, {
      prefix: 'bedrock',
      provider: 'bedrock',
      upstreamModel: UPSTREAM_MODEL,
      providerSettings: { region: 'eu-central-1' },
      account: await freshKeyPair(stack),
    }));
  });

  const weather: OpenAI.ChatCompletionTool = {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  };

  it('answers a chat completion from Converse, signed for the region, with usage and its usage row', async () => {
    const { data, response } = await gateway.openai.chat.completions
      .create({
        model,
        messages: [
          { role: 'system', content: 'Answer like a mock would.' },
          { role: 'user', content: 'hello bedrock' },
        ],
        max_tokens: 100,
        temperature: 0.5,
        stop: ['END'],
      })
      .withResponse();
    expect(data).toMatchObject({
      object: 'chat.completion',
      model: UPSTREAM_MODEL,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Echo: hello bedrock' },
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 11, completion_tokens: 5, total_tokens: 16 },
    });
    expect(data.usage?.prompt_tokens_details?.cached_tokens).toBe(7);

    const [sent] = (await stack.mockRequests(account)).slice(-1);
    expect(sent!.path).toBe('/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse');
    expect(sent!.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    expect(sent!.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'hello bedrock' }] }],
      system: [{ text: 'Answer like a mock would.' }],
      inferenceConfig: { maxTokens: 100, temperature: 0.5, stopSequences: ['END'] },
    });
    expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
      promptTokens: 11,
      completionTokens: 5,
      cachedTokens: 7,
      // 4 uncached * 1 + 7 cached * 0.1 + 5 * 2 micro-dollars = 14.7, rounded up.
      cost: '15',
      status: 200,
      stream: false,
      channelId,
    });
  });

  it('streams OpenAI chunks from ConverseStream frames, ending with the include_usage chunk and [DONE]', async () => {
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
    expect((await stack.mockRequests(account)).at(-1)!.path).toBe(
      '/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream',
    );
    expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
      promptTokens: 6,
      completionTokens: 7,
      stream: true,
      channelId,
    });
  });

  it('round-trips a tool call: toolUse out (streamed too), toolResult back in', async () => {
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
    expect(call.id).toMatch(/^tooluse_/);
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'example city' });
    expect((await stack.mockRequests(account)).at(-1)!.body.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'get_weather',
            description: 'Weather in a city',
            inputSchema: { json: weather.function.parameters },
          },
        },
      ],
      toolChoice: { any: {} },
    });

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
    expect((sent!.body.messages as unknown[]).slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: call.id, name: 'get_weather', input: { city: 'example city' } } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: call.id, content: [{ text: '18 degrees and sunny' }] } },
        ],
      },
    ]);

    const stream = gateway.openai.chat.completions.stream({
      model,
      messages: [{ role: 'user', content: 'weather?' }],
      tools: [weather],
    });
    const final = await stream.finalChatCompletion();
    const streamed = final.choices[0]!.message
      .tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect(streamed.id).toMatch(/^tooluse_/);
    expect(JSON.parse(streamed.function.arguments)).toEqual({ city: 'example city' });
  });

  it('sends data-URL images as bytes and refuses image URLs and embeddings with 400s', async () => {
    const answer = await gateway.openai.chat.completions.create({
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
    expect(answer.choices[0]!.message.content).toBe('Echo: what is this? (1 image)');
    const [sent] = (await stack.mockRequests(account)).slice(-1);
    expect((sent!.body.messages as { content: unknown[] }[])[0]!.content[1]).toEqual({
      image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } },
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
    ).rejects.toMatchObject({ status: 400, param: 'messages[0].content[0]' });
    await expect(gateway.openai.embeddings.create({ model, input: 'x' })).rejects.toMatchObject({
      status: 400,
      error: { message: expect.stringContaining('does not offer this endpoint') },
    });
  });

  it("renders Bedrock's errors in OpenAI's shape", async () => {
    await stack.mockFault({ key: account, status: 400, times: 1 });
    await expect(
      gateway.openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      code: 'ValidationException',
    });
  });

  it('fails over from a failing bedrock channel to an openai channel, and disables a key pair AWS refuses', async () => {
    const shared = uniqueName('shared-bedrock');
    const flaky = await freshKeyPair(stack);
    // The mock knows this access key id, but not with this secret: the signature is wrong.
    const wrongSecret = `${flaky.split(':')[0]}:${'w'.repeat(40)}`;
    await stack.createChannel({
      models: [shared],
      keys: [flaky],
      provider: 'bedrock',
      providerSettings: { region: 'us-east-1' },
      modelMapping: { [shared]: UPSTREAM_MODEL },
      priority: 20,
    });
    const refused = await stack.createChannel({
      models: [shared],
      keys: [wrongSecret],
      provider: 'bedrock',
      providerSettings: { region: 'us-east-1' },
      modelMapping: { [shared]: UPSTREAM_MODEL },
      priority: 10,
    });
    const fallback = await stack.createChannel({
      models: [shared],
      keys: [await freshAccount(stack)],
    });
    await stack.routable(gateway.token.key, shared);
    await stack.mockFault({ key: flaky, status: 503, times: 1 });
    const { data, response } = await gateway.openai.chat.completions
      .create({ model: shared, messages: [{ role: 'user', content: 'anyone there?' }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toBe('Echo: anyone there?');
    expect((await usageRow(stack, response.headers.get('x-request-id')!)).channelId).toBe(
      fallback.id,
    );
    expect((await stack.mockStats(flaky)).failed).toBe(1);
    await waitFor(
      async () =>
        (
          await query<{ status: string }>(
            stack.databaseUrl,
            'SELECT status FROM "ChannelKey" WHERE "channelId" = $1',
            [refused.id],
          )
        )[0]?.status === 'auto_disabled'
          ? true
          : undefined,
      { what: 'the refused key pair disabled' },
    );
  });
});
