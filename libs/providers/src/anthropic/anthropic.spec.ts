import { readFileSync } from 'node:fs';
import { GatewayError } from '@switchyard/contracts';
import type { AnswerContext } from '../adapter.js';
import { translate } from '../stream.fixture.js';
import { anthropicAdapter } from './anthropic.adapter.js';

// Fixtures follow the examples of Anthropic's API reference (Messages, Streaming, Tool use,
// Errors); the stream files are their event streams, with cache counts and a multi-byte
// character added.

const fixture = (name: string): Buffer =>
  readFileSync(new URL(`./fixtures/${name}`, import.meta.url));

const context: AnswerContext = {
  model: 'claude-sonnet-4-5',
  includeUsage: true,
  created: 1_700_000_000,
};

function request(body: Record<string, unknown>, stream = false): Record<string, unknown> {
  const outbound = anthropicAdapter.chatRequest(
    { body, upstreamModel: 'claude-sonnet-4-5-20250929', secret: 'sk-ant-secret', settings: {} },
    stream,
  );
  return JSON.parse(outbound.body.toString('utf8')) as Record<string, unknown>;
}

describe('anthropic requests', () => {
  it('sends the key, the API version and the Messages path', () => {
    const outbound = anthropicAdapter.chatRequest(
      {
        body: { model: 'claude', messages: [{ role: 'user', content: 'Hi' }] },
        upstreamModel: 'claude-sonnet-4-5',
        secret: 'sk-ant-secret',
        settings: { anthropicVersion: '2024-01-01' },
      },
      false,
    );
    expect(outbound.path).toBe('/v1/messages');
    expect(outbound.headers).toEqual({
      'x-api-key': 'sk-ant-secret',
      'anthropic-version': '2024-01-01',
    });
    const plain = anthropicAdapter.chatRequest(
      { body: { model: 'c', messages: [] }, upstreamModel: 'c', secret: 's', settings: {} },
      false,
    );
    expect(plain.headers['anthropic-version']).toBe('2023-06-01');
  });

  it('moves system and developer messages to `system` and keeps sampling settings', () => {
    expect(
      request(
        {
          model: 'claude',
          messages: [
            { role: 'system', content: 'You are terse.' },
            { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
            { role: 'user', content: 'Hello' },
          ],
          temperature: 0.2,
          top_p: 0.9,
          stop: 'END',
          max_completion_tokens: 300,
          user: 'user-42',
        },
        true,
      ),
    ).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      system: [
        { type: 'text', text: 'You are terse.' },
        { type: 'text', text: 'Answer in French.' },
      ],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      max_tokens: 300,
      temperature: 0.2,
      top_p: 0.9,
      stop_sequences: ['END'],
      metadata: { user_id: 'user-42' },
      stream: true,
    });
  });

  it("defaults max_tokens to the model's documented output limit", () => {
    const budget = (model: string): unknown =>
      JSON.parse(
        anthropicAdapter
          .chatRequest(
            {
              body: { messages: [{ role: 'user', content: 'x' }] },
              upstreamModel: model,
              secret: 's',
              settings: {},
            },
            false,
          )
          .body.toString(),
      ).max_tokens;
    expect(budget('claude-3-haiku-20240307')).toBe(4096);
    expect(budget('claude-3-5-sonnet-20241022')).toBe(8192);
    expect(budget('claude-sonnet-4-5-20250929')).toBe(64_000);
    expect(budget('claude-opus-4-1-20250805')).toBe(32_000);
  });

  it('turns images given as data URLs and http URLs into image blocks', () => {
    const { messages } = request({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these images?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'low' } },
          ],
        },
      ],
    });
    expect(messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these images?' },
          {
            type: 'image',
            source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
          },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
    ]);
  });

  it('converts tools, tool_choice, tool calls and their results (one user turn for parallel results)', () => {
    const converted = request({
      messages: [
        { role: 'user', content: 'Weather and time in SF?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'toolu_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"location":"SF"}' },
            },
            { id: 'toolu_2', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '15 degrees' },
        { role: 'tool', tool_call_id: 'toolu_2', content: [{ type: 'text', text: '9am' }] },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather',
            parameters: {
              type: 'object',
              properties: { location: { type: 'string' } },
              required: ['location'],
            },
          },
        },
        { type: 'function', function: { name: 'get_time' } },
      ],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    expect(converted.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather',
        input_schema: {
          type: 'object',
          properties: { location: { type: 'string' } },
          required: ['location'],
        },
      },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ]);
    expect(converted.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(converted.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather and time in SF?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'SF' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '15 degrees' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: '9am' },
        ],
      },
    ]);
    const tools = [{ type: 'function', function: { name: 'f' } }];
    const choice = (tool_choice: unknown): unknown =>
      request({ messages: [{ role: 'user', content: 'x' }], tools, tool_choice }).tool_choice;
    expect(choice('auto')).toEqual({ type: 'auto' });
    expect(choice('none')).toEqual({ type: 'none' });
    expect(choice({ type: 'function', function: { name: 'f' } })).toEqual({
      type: 'tool',
      name: 'f',
    });
  });

  it('reads a tool output that is only an error object back as an is_error tool_result', () => {
    const messages = (content: string): unknown =>
      (
        request({
          messages: [
            { role: 'user', content: 'x' },
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } },
              ],
            },
            { role: 'tool', tool_call_id: 't1', content },
          ],
        }).messages as unknown[]
      ).at(-1);
    expect(messages('{"error":"city not found"}')).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: 'city not found', is_error: true },
      ],
    });
    // An object with more than the error is an answer that mentions one.
    expect(messages('{"error":null,"temperature":3}')).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 't1', content: '{"error":null,"temperature":3}' },
      ],
    });
  });

  it('refuses what Anthropic cannot do with a 400 naming the field', () => {
    const refused = (body: Record<string, unknown>): GatewayError => {
      try {
        request({ messages: [{ role: 'user', content: 'x' }], ...body });
      } catch (error) {
        return error as GatewayError;
      }
      throw new Error('expected a refusal');
    };
    expect(refused({ n: 2 })).toMatchObject({ status: 400, param: 'n' });
    expect(refused({ response_format: { type: 'json_object' } })).toMatchObject({
      param: 'response_format',
    });
    expect(
      refused({
        messages: [
          {
            role: 'assistant',
            tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '[1' } }],
          },
        ],
      }),
    ).toMatchObject({ param: 'messages[0].tool_calls[0].function.arguments' });
    expect(
      refused({
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x' } }] },
        ],
      }),
    ).toMatchObject({ param: 'messages[0].content[0]' });
  });
});

describe('anthropic answers', () => {
  it('converts a text answer with its usage, cached input included in prompt_tokens', () => {
    const answer = anthropicAdapter.chatAnswer(
      Buffer.from(
        JSON.stringify({
          id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5-20250929',
          content: [{ type: 'text', text: 'Hi! My name is Claude.' }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: {
            input_tokens: 2095,
            output_tokens: 503,
            cache_read_input_tokens: 1000,
            cache_creation_input_tokens: 5,
          },
        }),
      ),
      context,
    );
    expect(JSON.parse(answer.body.toString())).toEqual({
      id: 'chatcmpl-msg_013Zva2CMHLNnXjNJJKqJ2EF',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'claude-sonnet-4-5-20250929',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hi! My name is Claude.' },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 3100,
        completion_tokens: 503,
        total_tokens: 3603,
        prompt_tokens_details: { cached_tokens: 1000 },
      },
    });
    expect(answer.usage).toEqual({ promptTokens: 3100, completionTokens: 503, cachedTokens: 1000 });
  });

  it('converts tool_use blocks to tool_calls and each stop_reason to its finish_reason', () => {
    const answer = (stop_reason: string, content: unknown[] = [{ type: 'text', text: 'x' }]) =>
      JSON.parse(
        anthropicAdapter
          .chatAnswer(
            Buffer.from(
              JSON.stringify({
                id: 'msg_1',
                content,
                stop_reason,
                usage: { input_tokens: 1, output_tokens: 1 },
              }),
            ),
            context,
          )
          .body.toString(),
      ).choices[0];
    const tools = answer('tool_use', [
      {
        type: 'tool_use',
        id: 'toolu_01A09q90qw90lq917835lq9',
        name: 'get_weather',
        input: { location: 'San Francisco, CA' },
      },
    ]);
    expect(tools).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'toolu_01A09q90qw90lq917835lq9',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA"}' },
          },
        ],
      },
      logprobs: null,
      finish_reason: 'tool_calls',
    });
    expect(answer('max_tokens').finish_reason).toBe('length');
    expect(answer('stop_sequence').finish_reason).toBe('stop');
    expect(answer('refusal').finish_reason).toBe('content_filter');
  });
});

describe('anthropic streams', () => {
  it('translates every event of a text stream in order, whatever the chunking, with the usage chunk', () => {
    for (const size of [1, 7, 4096]) {
      const translator = anthropicAdapter.chatStream(context);
      const events = translate(translator, fixture('text-stream.sse'), size);
      const base = {
        id: 'chatcmpl-msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY',
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model: 'claude-sonnet-4-5',
      };
      const delta = (d: object, finish: string | null = null) => ({
        ...base,
        choices: [{ index: 0, delta: d, logprobs: null, finish_reason: finish }],
        usage: null,
      });
      expect(events).toEqual([
        delta({ role: 'assistant', content: '' }),
        delta({ content: 'Hello' }),
        delta({ content: ' wörld!' }),
        delta({}, 'stop'),
        {
          ...base,
          choices: [],
          usage: {
            prompt_tokens: 125,
            completion_tokens: 15,
            total_tokens: 140,
            prompt_tokens_details: { cached_tokens: 100 },
          },
        },
        '[DONE]',
      ]);
      expect(translator.usage).toEqual({
        promptTokens: 125,
        completionTokens: 15,
        cachedTokens: 100,
      });
      expect(translator.failure).toBeNull();
    }
  });

  it('streams tool calls with their ids, names and argument deltas in order, numbered from 0', () => {
    const translator = anthropicAdapter.chatStream({ ...context, includeUsage: false });
    const events = translate(translator, fixture('tool-stream.sse'), 13) as {
      choices?: {
        delta: { tool_calls?: unknown[]; content?: string };
        finish_reason: string | null;
      }[];
      usage?: unknown;
    }[];
    const deltas = events.filter((e) => e !== ('[DONE]' as unknown)).map((e) => e.choices![0]!);
    expect(events.some((e) => e.usage !== undefined)).toBe(false);
    expect(deltas.map((d) => d.delta.tool_calls ?? d.delta.content ?? d.finish_reason)).toEqual([
      '',
      "Okay, let's check the weather.",
      [
        {
          index: 0,
          id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
          type: 'function',
          function: { name: 'get_weather', arguments: '' },
        },
      ],
      [{ index: 0, function: { arguments: '{"location":' } }],
      [{ index: 0, function: { arguments: ' "San Francisco, CA"' } }],
      [{ index: 0, function: { arguments: ', "unit": "fahrenheit"}' } }],
      [
        {
          index: 1,
          id: 'toolu_02',
          type: 'function',
          function: { name: 'get_time', arguments: '' },
        },
      ],
      [{ index: 1, function: { arguments: '{"tz": "PST"}' } }],
      'tool_calls',
    ]);
    expect(translator.usage).toEqual({ promptTokens: 472, completionTokens: 89, cachedTokens: 0 });
  });

  it('ends with an OpenAI error event on an error event or a stream cut before message_stop', () => {
    const overloaded = anthropicAdapter.chatStream(context);
    const text = fixture('text-stream.sse').toString().split('event: content_block_stop')[0]!;
    const events = translate(
      overloaded,
      Buffer.from(
        `${text}event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n`,
      ),
      64,
    );
    expect(events.at(-1)).toEqual({
      error: {
        message: 'The upstream stream was interrupted: overloaded_error: Overloaded',
        type: 'upstream_error',
        param: null,
        code: 'stream_interrupted',
      },
    });
    expect(overloaded.failure).toBe('overloaded_error: Overloaded');

    const cut = anthropicAdapter.chatStream(context);
    expect(translate(cut, Buffer.from(text), 64).at(-1)).toMatchObject({
      error: { code: 'stream_interrupted' },
    });
    expect(cut.failure).toMatch(/message_stop/);
  });
});

describe('anthropic errors', () => {
  it("renders Anthropic's error bodies in OpenAI's shape; 529 counts as 429 for health", () => {
    const error = anthropicAdapter.error(
      529,
      Buffer.from('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'),
    );
    expect(JSON.parse(error.body.toString())).toEqual({
      error: {
        message: 'Overloaded',
        type: 'overloaded_error',
        param: null,
        code: 'overloaded_error',
      },
    });
    expect(anthropicAdapter.healthStatus(529, Buffer.alloc(0))).toBe(429);
    expect(anthropicAdapter.healthStatus(401, Buffer.alloc(0))).toBe(401);
    const html = anthropicAdapter.error(401, Buffer.from('<html>denied</html>'));
    expect(JSON.parse(html.body.toString()).error).toMatchObject({ type: 'authentication_error' });
  });
});
