import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  lastSent,
  pricedModel,
  providerChannel,
  streamedUsageRow,
  usageRow,
  useProviderGateway,
  type ProviderChannel,
  type UsageRow,
} from '../support/provider-gateway.js';
import { freshAccount } from '../support/stack.js';

// OpenAI's Responses API in front of the gateway (docs/providers.md, "OpenAI's Responses API
// in front"), with the openai SDK as the client: passed through to an openai channel,
// converted through chat completions for anthropic and gemini channels, and refused where
// it needs what only OpenAI keeps. Then Anthropic's token count, with the anthropic SDK.

/** What the test models cost, per million tokens: 1 USD in, 0.10 USD cached in, 2 USD out. */
function expectedCost(row: UsageRow): string {
  const uncached = row.promptTokens - row.cachedTokens;
  return String(Math.ceil(uncached * 1 + row.cachedTokens * 0.1 + row.completionTokens * 2));
}

const weather: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather in a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

/** A 1×1 PNG. */
const PIXEL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

describe('gateway: the Responses API in front (/v1/responses)', () => {
  const gateway = useProviderGateway();
  const { stack } = gateway;

  describe('on an openai channel (passed through)', () => {
    let gpt: ProviderChannel;

    beforeAll(async () => {
      gpt = await providerChannel(gateway, {
        prefix: 'resp-gpt',
        provider: 'openai',
        upstreamModel: 'gpt-4o-mini',
      });
    });

    it('sends the body as the client wrote it, state and built-in tools included, metered from its usage', async () => {
      const { data, response } = await gateway.openai.responses
        .create({
          model: gpt.model,
          input: 'hello responses',
          instructions: 'Be brief.',
          previous_response_id: 'resp_earlier',
          store: true,
          tools: [{ type: 'web_search' }],
          metadata: { ticket: '7' },
        })
        .withResponse();
      expect(data).toMatchObject({
        object: 'response',
        status: 'completed',
        model: 'gpt-4o-mini',
        previous_response_id: 'resp_earlier',
        store: true,
      });
      expect(data.output_text).toBe('Echo: hello responses');
      const sent = await lastSent(stack, gpt.account);
      expect(sent.path).toBe('/v1/responses');
      // Only the model is renamed by the channel's mapping.
      expect(sent.body).toEqual({
        model: 'gpt-4o-mini',
        input: 'hello responses',
        instructions: 'Be brief.',
        previous_response_id: 'resp_earlier',
        store: true,
        tools: [{ type: 'web_search' }],
        metadata: { ticket: '7' },
      });
      const row = await usageRow(stack, response.headers.get('x-request-id')!);
      expect(row).toMatchObject({
        endpoint: 'responses',
        promptTokens: data.usage!.input_tokens,
        completionTokens: data.usage!.output_tokens,
        tokensCounted: false,
        status: 200,
        stream: false,
        channelId: gpt.channelId,
      });
      expect(row.cost).toBe(expectedCost(row));
    });

    it("relays the provider's event stream as it came, metered from its final event", async () => {
      const stream = gateway.openai.responses.stream({
        model: gpt.model,
        input: 'stream it through',
      });
      const final = await stream.finalResponse();
      expect(final.output_text).toBe('Echo: stream it through');
      expect((await lastSent(stack, gpt.account)).body).toEqual({
        model: 'gpt-4o-mini',
        input: 'stream it through',
        stream: true,
      });
      expect(await streamedUsageRow(stack, gpt.channelId)).toMatchObject({
        promptTokens: final.usage!.input_tokens,
        completionTokens: final.usage!.output_tokens,
        status: 200,
      });
    });
  });

  describe.each([
    ['anthropic', 'claude-sonnet-4-5-20250929'],
    ['gemini', 'gemini-2.5-flash'],
  ] as const)('on a %s channel (converted)', (provider, upstreamModel) => {
    let target: ProviderChannel;

    beforeAll(async () => {
      target = await providerChannel(gateway, {
        prefix: `resp-${provider}`,
        provider,
        upstreamModel,
      });
    });

    it('answers text as a Response, with usage (cached input apart) and its usage row', async () => {
      const { data, response } = await gateway.openai.responses
        .create({
          model: target.model,
          instructions: 'Answer like a mock would.',
          input: 'hello from responses',
          max_output_tokens: 100,
          temperature: 0.5,
          store: false,
        })
        .withResponse();
      expect(data).toMatchObject({
        object: 'response',
        status: 'completed',
        model: upstreamModel,
        instructions: 'Answer like a mock would.',
        store: false,
        output: [
          {
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: 'Echo: hello from responses' }],
          },
        ],
      });
      expect(data.id).toMatch(/^resp_/);
      expect(data.output_text).toBe('Echo: hello from responses');
      // Both mocks count the system prompt as read from the provider's cache.
      expect(data.usage!.input_tokens_details.cached_tokens).toBeGreaterThan(0);
      expect(data.usage!.total_tokens).toBe(data.usage!.input_tokens + data.usage!.output_tokens);
      const sent = await lastSent(stack, target.account);
      expect(sent.path).toMatch(
        provider === 'anthropic' ? /^\/v1\/messages$/ : /:generateContent$/,
      );
      const row = await usageRow(stack, response.headers.get('x-request-id')!);
      expect(row).toMatchObject({
        endpoint: 'responses',
        promptTokens: data.usage!.input_tokens,
        cachedTokens: data.usage!.input_tokens_details.cached_tokens,
        completionTokens: data.usage!.output_tokens,
        tokensCounted: false,
        status: 200,
        channelId: target.channelId,
      });
      expect(row.cost).toBe(expectedCost(row));
    });

    it('sends an image part to the provider in its own form', async () => {
      const answer = await gateway.openai.responses.create({
        model: target.model,
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'what is in this picture?' },
              { type: 'input_image', image_url: PIXEL, detail: 'auto' },
            ],
          },
        ],
      });
      expect(answer.status).toBe('completed');
      const sent = await lastSent(stack, target.account);
      const data = PIXEL.split(',')[1];
      if (provider === 'anthropic')
        expect(sent.body.messages).toEqual([
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is in this picture?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data } },
            ],
          },
        ]);
      else
        expect(sent.body.contents).toEqual([
          {
            role: 'user',
            parts: [
              { text: 'what is in this picture?' },
              { inlineData: { mimeType: 'image/png', data } },
            ],
          },
        ]);
    });

    it('round-trips a function tool: function_call out, function_call_output back in', async () => {
      const question = { role: 'user' as const, content: 'weather in Paris?' };
      const first = await gateway.openai.responses.create({
        model: target.model,
        input: [question],
        tools: [weather],
        tool_choice: 'required',
      });
      const call = first.output.find(
        (item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call',
      )!;
      expect(call).toMatchObject({
        type: 'function_call',
        name: 'get_weather',
        status: 'completed',
      });
      expect(JSON.parse(call.arguments)).toEqual({ city: 'example city' });

      const second = await gateway.openai.responses.create({
        model: target.model,
        tools: [weather],
        input: [
          question,
          ...first.output,
          { type: 'function_call_output', call_id: call.call_id, output: '18 degrees and sunny' },
        ] as OpenAI.Responses.ResponseInput,
      });
      expect(second.output_text).toBe('Echo: 18 degrees and sunny');
      const sent = await lastSent(stack, target.account);
      if (provider === 'anthropic')
        expect((sent.body.messages as unknown[]).slice(1)).toEqual([
          {
            role: 'assistant',
            content: [
              {
                type: 'tool_use',
                id: call.call_id,
                name: 'get_weather',
                input: { city: 'example city' },
              },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: call.call_id, content: '18 degrees and sunny' },
            ],
          },
        ]);
      else
        expect((sent.body.contents as { parts: unknown[] }[]).at(-1)).toEqual({
          role: 'user',
          parts: [
            {
              functionResponse: {
                name: 'get_weather',
                response: { output: '18 degrees and sunny' },
              },
            },
          ],
        });
    });

    it("streams OpenAI's events in order, numbered, which the SDK's stream helper assembles", async () => {
      const stream = gateway.openai.responses.stream({
        model: target.model,
        instructions: 'Answer like a mock would.',
        input: 'stream me please',
      });
      const seen: { type: string; sequence_number: number }[] = [];
      stream.on('event', (event) => seen.push(event));
      const final = await stream.finalResponse();
      expect(final.output_text).toBe('Echo: stream me please');
      const types = seen.map((event) => event.type);
      expect(types.slice(0, 4)).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
      ]);
      expect(types.filter((type) => type === 'response.output_text.delta').length).toBeGreaterThan(
        1,
      );
      expect(types.slice(-4)).toEqual([
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(seen.map((event) => event.sequence_number)).toEqual(seen.map((_, index) => index));
      const row = await streamedUsageRow(stack, target.channelId);
      expect(row).toMatchObject({
        promptTokens: final.usage!.input_tokens,
        cachedTokens: final.usage!.input_tokens_details.cached_tokens,
        completionTokens: final.usage!.output_tokens,
        status: 200,
      });
      expect(row.cost).toBe(expectedCost(row));
      expect(row.cachedTokens).toBeGreaterThan(0);
    });

    it('streams a function call whose argument deltas the SDK reassembles', async () => {
      const events: string[] = [];
      const stream = await gateway.openai.responses.create({
        model: target.model,
        input: 'weather in Oslo?',
        tools: [weather],
        stream: true,
      });
      let done: OpenAI.Responses.Response | undefined;
      for await (const event of stream) {
        events.push(event.type);
        if (event.type === 'response.completed') done = event.response;
      }
      expect(events).toContain('response.function_call_arguments.delta');
      expect(events.slice(-3)).toEqual([
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(done!.output).toMatchObject([
        { type: 'function_call', name: 'get_weather', arguments: '{"city":"example city"}' },
      ]);
    });

    it('refuses what needs state the gateway does not keep, with a 400 naming the parameter', async () => {
      for (const [fields, param] of [
        [{ previous_response_id: 'resp_earlier' }, 'previous_response_id'],
        [{ store: true }, 'store'],
        [{ background: true }, 'background'],
        [{ tools: [{ type: 'web_search' }] }, 'tools[0]'],
      ] as const) {
        const refused = gateway.openai.responses.create({
          model: target.model,
          input: 'continue',
          ...fields,
        } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
        await expect(refused).rejects.toBeInstanceOf(OpenAI.BadRequestError);
        await expect(refused).rejects.toMatchObject({
          status: 400,
          code: 'unsupported_parameter',
          param,
        });
      }
    });
  });

  it('sends a previous_response_id request only to openai channels, never failing over to a converted one', async () => {
    const shared = await pricedModel(stack, 'resp-shared');
    const claudeKey = await freshAccount(stack);
    const gptKey = await freshAccount(stack);
    await stack.createChannel({
      models: [shared],
      keys: [claudeKey],
      provider: 'anthropic',
      priority: 10,
    });
    const gptChannel = await stack.createChannel({ models: [shared], keys: [gptKey] });
    await stack.routable(gateway.token.key, shared);

    // The converted channel comes first, but cannot serve it: the openai one does.
    const { data, response } = await gateway.openai.responses
      .create({ model: shared, input: 'and then?', previous_response_id: 'resp_earlier' })
      .withResponse();
    expect(data.previous_response_id).toBe('resp_earlier');
    expect((await usageRow(stack, response.headers.get('x-request-id')!)).channelId).toBe(
      gptChannel.id,
    );

    // The openai channel fails: the request ends there rather than losing its conversation.
    await stack.mockFault({ key: gptKey, status: 500, times: 5 });
    await expect(
      gateway.openai.responses.create({
        model: shared,
        input: 'and then?',
        previous_response_id: 'resp_earlier',
      }),
    ).rejects.toMatchObject({ status: 502, code: 'upstream_error' });
    expect((await stack.mockStats(claudeKey)).requests).toBe(0);

    // Without the stored state the converted channel serves it as usual.
    const converted = await gateway.openai.responses.create({
      model: shared,
      input: 'fresh start',
    });
    expect(converted.output_text).toBe('Echo: fresh start');
    expect((await stack.mockStats(claudeKey)).requests).toBe(1);
  });

  it('ends a converted stream cut by the upstream with a numbered error event, which the SDK raises', async () => {
    const cut = await providerChannel(gateway, {
      prefix: 'resp-cut',
      provider: 'anthropic',
      upstreamModel: 'claude-sonnet-4-5-20250929',
    });
    await stack.mockFault({ key: cut.account, disconnectAfterChunks: 3, times: 1 });
    const events: { type: string; sequence_number: number }[] = [];
    const stream = gateway.openai.responses.stream({
      model: cut.model,
      input: 'a long answer, cut short',
    });
    stream.on('event', (event) => events.push(event));
    const failed = stream.finalResponse();
    await expect(failed).rejects.toBeInstanceOf(OpenAI.APIError);
    await expect(failed).rejects.toThrow(/The upstream stream was interrupted/);
    expect(events[0]!.type).toBe('response.created');
  });

  it("answers bad input with OpenAI's errors", async () => {
    const gpt = await providerChannel(gateway, {
      prefix: 'resp-bad',
      provider: 'anthropic',
      upstreamModel: 'claude-sonnet-4-5-20250929',
    });
    await expect(
      gateway.openai.responses.create({
        model: gpt.model,
      } as OpenAI.Responses.ResponseCreateParamsNonStreaming),
    ).rejects.toMatchObject({ status: 400, code: 'invalid_request', param: 'input' });
    const malformed = await fetch(`${stack.edge.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.token.key}`, 'content-type': 'application/json' },
      body: '{"model":',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: { code: 'invalid_json' } });
    await expect(
      stack.client('sk-not-ours').responses.create({ model: gpt.model, input: 'x' }),
    ).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  describe("Anthropic's token count (/v1/messages/count_tokens)", () => {
    const request = (model: string): Anthropic.Messages.MessageCountTokensParams => ({
      model,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'how many tokens is this?' }],
      tools: [
        {
          name: 'get_weather',
          input_schema: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ],
    });

    it('asks an anthropic channel, passing the body on, and meters no tokens', async () => {
      const claude = await providerChannel(gateway, {
        prefix: 'count-claude',
        provider: 'anthropic',
        upstreamModel: 'claude-sonnet-4-5-20250929',
      });
      const { data, response } = await gateway.anthropic.messages
        .countTokens(request(claude.model))
        .withResponse();
      // The mock counts four characters a token: 'Be brief.' and the message.
      expect(data).toEqual({
        input_tokens:
          Math.ceil('Be brief.'.length / 4) + Math.ceil('how many tokens is this?'.length / 4),
      });
      const sent = await lastSent(stack, claude.account);
      expect(sent.path).toBe('/v1/messages/count_tokens');
      expect(sent.body).toEqual({ ...request('claude-sonnet-4-5-20250929') });
      expect(await usageRow(stack, response.headers.get('x-request-id')!)).toMatchObject({
        endpoint: 'messages.count_tokens',
        promptTokens: 0,
        completionTokens: 0,
        tokensCounted: false,
        cost: '0',
        channelId: claude.channelId,
      });
    });

    it('counts for an openai channel with the tokenizer, without asking it', async () => {
      const gpt = await providerChannel(gateway, {
        prefix: 'count-gpt',
        provider: 'openai',
        upstreamModel: 'gpt-4o-mini',
      });
      const data = await gateway.anthropic.messages.countTokens(request(gpt.model));
      expect(data.input_tokens).toBeGreaterThan(10);
      expect(await stack.mockRequests(gpt.account)).toEqual([]);
      const bare = await gateway.anthropic.messages.countTokens({
        model: gpt.model,
        messages: [{ role: 'user', content: 'how many tokens is this?' }],
      });
      // o200k_base: "how many tokens is this?" is six tokens; the tools and system add more.
      expect(bare.input_tokens).toBe(6);
      expect(data.input_tokens).toBeGreaterThan(bare.input_tokens);

      const refused = gateway.anthropic.messages.countTokens({
        model: gpt.model,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } },
            ],
          },
        ],
      });
      await expect(refused).rejects.toBeInstanceOf(Anthropic.BadRequestError);
      await expect(refused).rejects.toMatchObject({
        error: { type: 'error', error: { type: 'invalid_request_error' } },
      });
    });
  });
});
