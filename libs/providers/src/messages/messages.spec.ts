import { readFileSync } from 'node:fs';
import { GatewayError } from '@switchyard/contracts';
import type { AnswerContext } from '../adapter.js';
import { AnthropicStreamTranslator } from '../anthropic/anthropic-answer.js';
import {
  AnthropicStreamReader,
  ChatToMessagesStream,
  chatAnswerToMessage,
  chatErrorToMessagesError,
  messagesErrorBody,
  messagesPassthroughUsage,
} from './messages-answer.js';
import { messagesToChatRequest } from './messages-request.js';

// Anthropic's API in front (docs/providers.md). Requests and answers follow the examples of
// Anthropic's API reference (Messages, Tool use, Streaming, Errors); the streams are the
// anthropic adapter's fixtures, themselves Anthropic's documented event streams.

const anthropicFixture = (name: string): Buffer =>
  readFileSync(new URL(`../anthropic/fixtures/${name}`, import.meta.url));

const context: AnswerContext = {
  model: 'claude-sonnet-4-5',
  includeUsage: true,
  created: 1_700_000_000,
};

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

function events(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      expect(eventLine).toMatch(/^event: /);
      expect(dataLine).toMatch(/^data: /);
      return {
        event: eventLine!.slice(7),
        data: JSON.parse(dataLine!.slice(6)) as Record<string, unknown>,
      };
    });
}

/** Feeds a stream in pieces of `size` bytes, so events and characters are split anywhere. */
function feed(translator: ChatToMessagesStream, stream: Buffer, size: number): string {
  let out = '';
  for (let at = 0; at < stream.length; at += size)
    out += translator.push(stream.subarray(at, at + size));
  return out + translator.end();
}

/** An Anthropic stream as the OpenAI chunks the anthropic adapter makes of it. */
function asChatChunks(stream: Buffer): Buffer {
  const translator = new AnthropicStreamTranslator(context);
  return Buffer.from(translator.push(stream) + translator.end());
}

// Anthropic's tool use example: a tool call and its result, in the request's history.
const toolUseRequest = {
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  system: [{ type: 'text', text: 'You are a weather bot.', cache_control: { type: 'ephemeral' } }],
  tools: [
    {
      name: 'get_weather',
      description: 'Get the current weather in a given location',
      input_schema: {
        type: 'object',
        properties: { location: { type: 'string' } },
        required: ['location'],
      },
    },
  ],
  tool_choice: { type: 'any', disable_parallel_tool_use: true },
  messages: [
    { role: 'user', content: 'What is the weather like in San Francisco?' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user wants SF.', signature: 'sig' },
        { type: 'text', text: 'Let me check.' },
        {
          type: 'tool_use',
          id: 'toolu_01A09q90qw90lq917835lq9',
          name: 'get_weather',
          input: { location: 'San Francisco, CA', unit: 'celsius' },
        },
      ],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_01A09q90qw90lq917835lq9',
          content: [{ type: 'text', text: '15 degrees' }],
        },
        { type: 'text', text: 'And is that warm?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0K' } },
      ],
    },
  ],
  stop_sequences: ['END'],
  temperature: 0.2,
  top_p: 0.9,
  metadata: { user_id: 'user-42' },
  stream: true,
};

describe('Anthropic requests to OpenAI chat completions', () => {
  it('converts system, text, images, tool calls and results, tools and settings', () => {
    expect(messagesToChatRequest(toolUseRequest)).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [
        { role: 'system', content: 'You are a weather bot.' },
        { role: 'user', content: 'What is the weather like in San Francisco?' },
        {
          role: 'assistant',
          content: 'Let me check.',
          tool_calls: [
            {
              id: 'toolu_01A09q90qw90lq917835lq9',
              type: 'function',
              function: {
                name: 'get_weather',
                arguments: '{"location":"San Francisco, CA","unit":"celsius"}',
              },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_01A09q90qw90lq917835lq9', content: '15 degrees' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'And is that warm?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' } },
          ],
        },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Get the current weather in a given location',
            parameters: toolUseRequest.tools[0]!.input_schema,
          },
        },
      ],
      tool_choice: 'required',
      parallel_tool_calls: false,
      stop: ['END'],
      temperature: 0.2,
      top_p: 0.9,
      user: 'user-42',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("carries a failed tool_result (is_error) as OpenAI's function error object", () => {
    const converted = messagesToChatRequest({
      model: 'm',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: 'city not found', is_error: true },
          ],
        },
      ],
    });
    expect((converted.messages as unknown[]).at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 't1',
      content: '{"error":"city not found"}',
    });
  });

  it('maps every tool_choice, and sends an assistant turn of tool calls only with null content', () => {
    const base = {
      model: 'm',
      max_tokens: 10,
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
      ],
    };
    const choice = (tool_choice: unknown): unknown =>
      messagesToChatRequest({ ...base, tool_choice }).tool_choice;
    expect(choice({ type: 'auto' })).toBe('auto');
    expect(choice({ type: 'none' })).toBe('none');
    expect(choice({ type: 'tool', name: 'f' })).toEqual({
      type: 'function',
      function: { name: 'f' },
    });
    expect(choice(undefined)).toBeUndefined();
    const converted = messagesToChatRequest(base);
    expect((converted.messages as unknown[]).slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 't1', content: 'ok' },
    ]);
    expect(converted.stream).toBeUndefined();
    expect(converted.stream_options).toBeUndefined();
  });

  it.each([
    [
      'a document block',
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'document', source: { type: 'text', data: 'x' } }],
          },
        ],
      },
      'messages[0].content[0]',
    ],
    ['a server tool', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools[0]'],
    ['top_k', { top_k: 5 }, 'top_k'],
    [
      'an image given as a file',
      {
        messages: [
          { role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] },
        ],
      },
      'messages[0].content[0].source',
    ],
    [
      'an image in a tool result',
      {
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't',
                content: [{ type: 'image', source: { type: 'url', url: 'https://x' } }],
              },
            ],
          },
        ],
      },
      'messages[0].content[0]',
    ],
    ['an unknown tool_choice', { tool_choice: { type: 'sometimes' } }, 'tool_choice'],
  ])('refuses %s, which has no OpenAI equivalent, with a 400 naming it', (_name, change, param) => {
    expectRefusal({ tools: [{ name: 'f' }], ...change }, param);
  });

  // The edge checks only the top-level blocks (apps/edge, anthropic-shape.ts): what lies deeper
  // reaches the conversion as the client sent it, and must be a 400, never a TypeError.
  it.each([
    ['a tool that is no object', { tools: [null] }, 'tools[0]'],
    ['a system block that is no object', { system: [null] }, 'system[0]'],
    [
      'a tool result part that is no block',
      {
        messages: [
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [null] }] },
        ],
      },
      'messages[0].content[0].content[0]',
    ],
  ])('refuses %s with a 400 naming it', (_name, change, param) => {
    expectRefusal(change, param);
  });

  /** A one-line question with `change` applied converts to a 400 naming `param`. */
  function expectRefusal(change: Record<string, unknown>, param: string): void {
    let thrown: unknown;
    try {
      messagesToChatRequest({
        model: 'm',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'x' }],
        ...change,
      });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GatewayError);
    expect(thrown).toMatchObject({ status: 400, code: 'invalid_request', param });
  }
});

describe('OpenAI answers to Anthropic messages', () => {
  it("gives Anthropic's message for a text answer, with the cached input apart", () => {
    const completion = {
      id: 'chatcmpl-013Zva2CMHLNnXjNJJKqJ2EF',
      object: 'chat.completion',
      model: 'gpt-4o-2024-08-06',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hi! My name is Claude.' },
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: 2095,
        completion_tokens: 503,
        total_tokens: 2598,
        prompt_tokens_details: { cached_tokens: 95 },
      },
    };
    const answer = chatAnswerToMessage(Buffer.from(JSON.stringify(completion)), context);
    expect(JSON.parse(answer.body.toString('utf8'))).toEqual({
      id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o-2024-08-06',
      content: [{ type: 'text', text: 'Hi! My name is Claude.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 2000,
        output_tokens: 503,
        cache_read_input_tokens: 95,
        cache_creation_input_tokens: 0,
      },
    });
    expect(answer.usage).toEqual({ promptTokens: 2095, completionTokens: 503, cachedTokens: 95 });
    expect(answer.completionText).toBe('Hi! My name is Claude.');
  });

  it.each([
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
    ['stop', 'end_turn'],
  ])('maps finish_reason %s to stop_reason %s', (finish, stop) => {
    const body = Buffer.from(
      JSON.stringify({ choices: [{ message: { content: 'x' }, finish_reason: finish }] }),
    );
    const message = JSON.parse(chatAnswerToMessage(body, context).body.toString('utf8')) as {
      stop_reason: string;
      model: string;
    };
    expect(message.stop_reason).toBe(stop);
    expect(message.model).toBe('claude-sonnet-4-5');
  });

  it('gives tool calls as tool_use blocks, and no usage when the upstream reported none', () => {
    const completion = {
      id: 'chatcmpl-1',
      model: 'gpt-4o',
      choices: [
        {
          message: {
            content: null,
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"location":"San Francisco, CA"}' },
              },
              { id: 'call_2', type: 'function', function: { name: 'now', arguments: '' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
    };
    const answer = chatAnswerToMessage(Buffer.from(JSON.stringify(completion)), context);
    expect(JSON.parse(answer.body.toString('utf8'))).toMatchObject({
      content: [
        {
          type: 'tool_use',
          id: 'call_1',
          name: 'get_weather',
          input: { location: 'San Francisco, CA' },
        },
        { type: 'tool_use', id: 'call_2', name: 'now', input: {} },
      ],
      stop_reason: 'tool_use',
    });
    expect(answer.usage).toBeNull();
  });
});

describe('OpenAI streams to Anthropic events', () => {
  const toolStream = anthropicFixture('tool-stream.sse');

  it.each([1, 7, 4096])(
    "turns the chunks of Anthropic's tool-use stream back into its documented events (pieces of %i bytes)",
    (size) => {
      const translator = new ChatToMessagesStream(context);
      const out = events(feed(translator, asChatChunks(toolStream), size));
      // The documented stream less its ping and its empty first argument delta (no chunk).
      const documented = events(toolStream.toString('utf8')).filter(
        (e) =>
          e.event !== 'ping' &&
          (e.data.delta as { partial_json?: string } | undefined)?.partial_json !== '',
      );
      expect(out.map((e) => e.event)).toEqual(documented.map((e) => e.event));
      for (const event of out) expect(event.data.type).toBe(event.event);
      // Every block and delta as documented; the message's id and usage are OpenAI's to tell.
      const blocks = (list: SseEvent[]): unknown[] =>
        list.filter((e) => e.event.startsWith('content_block')).map((e) => e.data);
      expect(blocks(out)).toEqual(blocks(documented));
      expect(out[0]!.data.message).toMatchObject({
        id: 'msg_014p7gG3wDgGV9EUtLvnow3U',
        model: 'claude-sonnet-4-5',
        role: 'assistant',
        content: [],
      });
      expect(out.at(-2)!.data).toEqual({
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: {
          input_tokens: 472,
          output_tokens: 89,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 0,
        },
      });
      expect(translator.usage).toEqual({ promptTokens: 472, completionTokens: 89 });
      expect(translator.failure).toBeNull();
    },
  );

  it('stops at [DONE] after the usage chunk, with the cached input apart', () => {
    const chunk = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`;
    const stream = Buffer.from(
      chunk({ id: 'chatcmpl-9', model: 'gpt-4o', choices: [{ delta: { role: 'assistant' } }] }) +
        chunk({ choices: [{ delta: { content: 'Hé' } }] }) +
        chunk({ choices: [{ delta: {}, finish_reason: 'length' }] }) +
        chunk({
          choices: [],
          usage: {
            prompt_tokens: 30,
            completion_tokens: 2,
            prompt_tokens_details: { cached_tokens: 20 },
          },
        }) +
        'data: [DONE]\n\n',
    );
    const translator = new ChatToMessagesStream(context);
    const out = events(feed(translator, stream, 3));
    expect(out.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(out[2]!.data.delta).toEqual({ type: 'text_delta', text: 'Hé' });
    expect(out[4]!.data).toMatchObject({
      delta: { stop_reason: 'max_tokens' },
      usage: { input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 20 },
    });
    expect(translator.usage).toEqual({ promptTokens: 30, completionTokens: 2, cachedTokens: 20 });
  });

  it('ends a stream cut before its finish reason, or broken by an error, with an error event', () => {
    const cut = new ChatToMessagesStream(context);
    const out = events(
      feed(cut, Buffer.from('data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n'), 100),
    );
    expect(out.at(-1)).toEqual({
      event: 'error',
      data: {
        type: 'error',
        error: {
          type: 'api_error',
          message:
            'The upstream stream was interrupted: the upstream stream ended before its finish reason',
        },
      },
    });
    expect(cut.failure).not.toBeNull();

    const broken = new ChatToMessagesStream(context);
    const error = { error: { message: 'overloaded_error: Overloaded', type: 'upstream_error' } };
    expect(events(broken.push(Buffer.from(`data: ${JSON.stringify(error)}\n\n`)))).toEqual([
      {
        event: 'error',
        data: {
          type: 'error',
          error: { type: 'api_error', message: 'overloaded_error: Overloaded' },
        },
      },
    ]);
    expect(broken.failure).toBe('overloaded_error: Overloaded');
    expect(broken.end()).toBe('');
  });
});

describe('anthropic channels behind /v1/messages', () => {
  it('reads the usage of an answer relayed as it came, cache reads and writes included', () => {
    const body = Buffer.from(
      JSON.stringify({
        id: 'msg_1',
        type: 'message',
        model: 'claude-sonnet-4-5-20250929',
        content: [{ type: 'text', text: 'Hi' }],
        stop_reason: 'end_turn',
        usage: {
          input_tokens: 3,
          output_tokens: 5,
          cache_read_input_tokens: 7,
          cache_creation_input_tokens: 11,
        },
      }),
    );
    const read = messagesPassthroughUsage(body, context);
    expect(read.body).toBe(body);
    expect(read.usage).toEqual({ promptTokens: 21, completionTokens: 5, cachedTokens: 7 });
    expect(read.model).toBe('claude-sonnet-4-5-20250929');
  });

  it('reads the usage of a stream without writing anything, but the error ending a cut one', () => {
    const stream = anthropicFixture('tool-stream.sse');
    const reader = new AnthropicStreamReader(context);
    expect(reader.push(stream)).toBe('');
    expect(reader.end()).toBe('');
    expect(reader.usage).toEqual({ promptTokens: 472, completionTokens: 89, cachedTokens: 0 });

    const cut = new AnthropicStreamReader(context);
    cut.push(stream.subarray(0, stream.indexOf('event: message_delta')));
    expect(events(cut.end())).toEqual([
      {
        event: 'error',
        data: {
          type: 'error',
          error: {
            type: 'api_error',
            message:
              'The upstream stream was interrupted: the upstream stream ended before its message_stop event',
          },
        },
      },
    ]);
  });
});

describe('errors in Anthropic shape', () => {
  it.each([
    [400, 'invalid_request_error'],
    [401, 'authentication_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [413, 'request_too_large'],
    [429, 'rate_limit_error'],
    [500, 'api_error'],
    [502, 'api_error'],
    [503, 'overloaded_error'],
    [529, 'overloaded_error'],
  ])('gives status %i the type %s', (status, type) => {
    expect(JSON.parse(messagesErrorBody(status, 'Nope.').toString('utf8'))).toEqual({
      type: 'error',
      error: { type, message: 'Nope.' },
    });
  });

  it("keeps an OpenAI error's message, and the status's when the body is not JSON", () => {
    const openai = Buffer.from(
      JSON.stringify({
        error: { message: 'Invalid schema for function', type: 'invalid_request_error' },
      }),
    );
    expect(JSON.parse(chatErrorToMessagesError(400, openai).toString('utf8'))).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'Invalid schema for function' },
    });
    expect(
      JSON.parse(chatErrorToMessagesError(502, Buffer.from('<html>')).toString('utf8')),
    ).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'The upstream answered 502.' },
    });
  });
});
