import { GatewayError } from '@switchyard/contracts';
import type { AnswerContext } from '../adapter.js';
import {
  ChatToResponsesStream,
  ResponsesStreamReader,
  chatAnswerToResponse,
  responseEcho,
  responsesPassthroughUsage,
} from './responses-answer.js';
import { responsesStateRefusal, responsesToChatRequest } from './responses-request.js';

// OpenAI's Responses API in front (docs/providers.md). Requests follow the examples of
// OpenAI's Responses reference (text, image, function calling); the streams are OpenAI chat
// chunks as the adapters give them, split anywhere.

const context: AnswerContext = {
  model: 'claude-sonnet-4-5',
  includeUsage: true,
  created: 1_700_000_000,
};

interface SseEvent {
  event: string;
  data: Record<string, unknown> & { type: string; sequence_number: number };
}

function events(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      expect(eventLine).toMatch(/^event: /);
      expect(dataLine).toMatch(/^data: /);
      const data = JSON.parse(dataLine!.slice(6)) as SseEvent['data'];
      expect(data.type).toBe(eventLine!.slice(7));
      return { event: eventLine!.slice(7), data };
    });
}

function chunks(...payloads: unknown[]): Buffer {
  return Buffer.from(
    payloads.map((p) => `data: ${typeof p === 'string' ? p : JSON.stringify(p)}\n\n`).join(''),
  );
}

function feed(translator: ChatToResponsesStream, stream: Buffer, size: number): SseEvent[] {
  let out = '';
  for (let at = 0; at < stream.length; at += size)
    out += translator.push(stream.subarray(at, at + size));
  return events(out + translator.end());
}

function refusal(run: () => unknown): GatewayError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected a refusal');
}

describe('responsesToChatRequest', () => {
  it('turns instructions, a string input and the sampling fields into a chat completion', () => {
    expect(
      responsesToChatRequest({
        model: 'm',
        instructions: 'Be brief.',
        input: 'hello',
        max_output_tokens: 50,
        temperature: 0.2,
        top_p: 0.9,
        store: false,
        stream: true,
      }),
    ).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello' },
      ],
      max_tokens: 50,
      temperature: 0.2,
      top_p: 0.9,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('converts message items with text and image parts, and a function call round trip', () => {
    const chat = responsesToChatRequest({
      model: 'm',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'what is this?' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
          ],
        },
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Let me look.' }],
        },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' },
        { type: 'function_call', call_id: 'call_2', name: 'lookup', arguments: '{"q":"y"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'one' },
        {
          type: 'function_call_output',
          call_id: 'call_2',
          output: [{ type: 'input_text', text: 'two' }],
        },
      ],
      tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' }, strict: true }],
      tool_choice: { type: 'function', name: 'lookup' },
      text: {
        format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
      },
    });
    expect(chat.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Let me look.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
          { id: 'call_2', type: 'function', function: { name: 'lookup', arguments: '{"q":"y"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'one' },
      { role: 'tool', tool_call_id: 'call_2', content: 'two' },
    ]);
    expect(chat.tools).toEqual([
      {
        type: 'function',
        function: { name: 'lookup', parameters: { type: 'object' }, strict: true },
      },
    ]);
    expect(chat.tool_choice).toEqual({ type: 'function', function: { name: 'lookup' } });
    expect(chat.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'answer', schema: { type: 'object' }, strict: true },
    });
  });

  it.each([
    [{ previous_response_id: 'resp_1' }, 'previous_response_id'],
    [{ conversation: 'conv_1' }, 'conversation'],
    [{ store: true }, 'store'],
    [{ background: true }, 'background'],
    [{ prompt: { id: 'pmpt_1' } }, 'prompt'],
    [{ tools: [{ type: 'function', name: 'f' }, { type: 'web_search' }] }, 'tools[1]'],
    [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0]'],
  ])('refuses state and built-in tools the gateway does not keep: %j', (fields, param) => {
    const body = { model: 'm', input: 'hi', ...fields };
    const error = refusal(() => responsesToChatRequest(body));
    expect(error).toMatchObject({ code: 'unsupported_parameter', status: 400, param });
    expect(error.message).toMatch(/not served by OpenAI/);
    expect(responsesStateRefusal(body)).not.toBeNull();
  });

  it('refuses image file ids and unknown items with a 400 naming the part', () => {
    expect(
      refusal(() =>
        responsesToChatRequest({
          model: 'm',
          input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }],
        }),
      ).param,
    ).toBe('input[0].content[0]');
    expect(
      refusal(() =>
        responsesToChatRequest({ model: 'm', input: [{ type: 'computer_call_output' }] }),
      ).param,
    ).toBe('input[0]');
  });
});

describe('chatAnswerToResponse', () => {
  const echo = responseEcho({ instructions: 'Be brief.', max_output_tokens: 20 });

  it('gives a message item, function call items and the usage with cached and reasoning tokens', () => {
    const answer = chatAnswerToResponse(
      Buffer.from(
        JSON.stringify({
          id: 'chatcmpl-1',
          model: 'claude-sonnet-4-5-20250929',
          choices: [
            {
              message: {
                content: 'Looking.',
                tool_calls: [
                  { id: 'call_1', function: { name: 'lookup', arguments: '{"q":"x"}' } },
                ],
              },
              finish_reason: 'tool_calls',
            },
          ],
          usage: {
            prompt_tokens: 30,
            completion_tokens: 12,
            prompt_tokens_details: { cached_tokens: 10 },
            completion_tokens_details: { reasoning_tokens: 4 },
          },
        }),
      ),
      context,
      echo,
    );
    const response = JSON.parse(answer.body.toString()) as Record<string, unknown>;
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      incomplete_details: null,
      model: 'claude-sonnet-4-5-20250929',
      instructions: 'Be brief.',
      max_output_tokens: 20,
      store: false,
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Looking.', annotations: [] }],
        },
        {
          type: 'function_call',
          call_id: 'call_1',
          name: 'lookup',
          arguments: '{"q":"x"}',
          status: 'completed',
        },
      ],
      usage: {
        input_tokens: 30,
        input_tokens_details: { cached_tokens: 10 },
        output_tokens: 12,
        output_tokens_details: { reasoning_tokens: 4 },
        total_tokens: 42,
      },
    });
    expect(response.id).toMatch(/^resp_/);
    expect(answer.usage).toEqual({ promptTokens: 30, completionTokens: 12, cachedTokens: 10 });
  });

  it('is incomplete, for max_output_tokens, when the answer was cut', () => {
    const answer = chatAnswerToResponse(
      Buffer.from(
        JSON.stringify({ choices: [{ message: { content: 'abc' }, finish_reason: 'length' }] }),
      ),
      context,
      echo,
    );
    expect(JSON.parse(answer.body.toString())).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      usage: null,
    });
  });
});

describe('ChatToResponsesStream', () => {
  const textStream = chunks(
    {
      id: 'c1',
      model: 'gemini-2.5-flash',
      choices: [{ delta: { role: 'assistant', content: '' } }],
    },
    { id: 'c1', choices: [{ delta: { content: 'Héllo ' } }] },
    { id: 'c1', choices: [{ delta: { content: 'wörld' } }] },
    { id: 'c1', choices: [{ delta: {}, finish_reason: 'stop' }] },
    {
      id: 'c1',
      choices: [],
      usage: {
        prompt_tokens: 9,
        completion_tokens: 3,
        prompt_tokens_details: { cached_tokens: 4 },
      },
    },
    '[DONE]',
  );

  it.each([1, 7, 64, 10_000])(
    "emits OpenAI's event order with increasing sequence numbers (pieces of %i bytes)",
    (size) => {
      const translator = new ChatToResponsesStream(context, responseEcho({}));
      const out = feed(translator, textStream, size);
      expect(out.map((e) => e.event)).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(out.map((e) => e.data.sequence_number)).toEqual(out.map((_, index) => index));
      expect(out[0]!.data.response).toMatchObject({
        status: 'in_progress',
        model: 'gemini-2.5-flash',
        output: [],
      });
      const itemId = (out[2]!.data.item as { id: string }).id;
      expect(out[4]!.data).toMatchObject({
        item_id: itemId,
        output_index: 0,
        content_index: 0,
        delta: 'Héllo ',
      });
      expect(out[6]!.data).toMatchObject({ text: 'Héllo wörld' });
      expect(out.at(-1)!.data.response).toMatchObject({
        status: 'completed',
        output: [
          { id: itemId, type: 'message', content: [{ type: 'output_text', text: 'Héllo wörld' }] },
        ],
        usage: { input_tokens: 9, output_tokens: 3, input_tokens_details: { cached_tokens: 4 } },
      });
      expect(translator.usage).toEqual({ promptTokens: 9, completionTokens: 3, cachedTokens: 4 });
    },
  );

  it('streams text then two function calls, each item closed before the next opens', () => {
    const stream = chunks(
      { choices: [{ delta: { content: 'Checking.' } }] },
      {
        choices: [
          {
            delta: {
              tool_calls: [{ index: 0, id: 'call_a', function: { name: 'f', arguments: '' } }],
            },
          },
        ],
      },
      { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] } }] },
      { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: '1}' } }] } }] },
      {
        choices: [
          {
            delta: {
              tool_calls: [{ index: 1, id: 'call_b', function: { name: 'g', arguments: '{}' } }],
            },
          },
        ],
      },
      { choices: [{ delta: {}, finish_reason: 'tool_calls' }] },
      '[DONE]',
    );
    const out = feed(new ChatToResponsesStream(context, responseEcho({})), stream, 13);
    expect(out.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(out[11]!.data).toMatchObject({ output_index: 1, name: 'f', arguments: '{"a":1}' });
    expect((out.at(-1)!.data.response as { output: unknown[] }).output).toMatchObject([
      { type: 'message' },
      {
        type: 'function_call',
        call_id: 'call_a',
        name: 'f',
        arguments: '{"a":1}',
        status: 'completed',
      },
      { type: 'function_call', call_id: 'call_b', name: 'g', arguments: '{}', status: 'completed' },
    ]);
  });

  it('ends a cut answer with response.incomplete, and a broken stream with a numbered error event', () => {
    const cut = feed(
      new ChatToResponsesStream(context, responseEcho({})),
      chunks({ choices: [{ delta: { content: 'abc' }, finish_reason: 'length' }] }, '[DONE]'),
      5,
    );
    expect(cut.at(-1)!.data).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });
    const translator = new ChatToResponsesStream(context, responseEcho({}));
    const broken = feed(translator, chunks({ choices: [{ delta: { content: 'abc' } }] }), 5);
    expect(broken.at(-1)!.data).toMatchObject({
      type: 'error',
      code: 'stream_interrupted',
      sequence_number: broken.length - 1,
    });
    expect(translator.failure).toContain('finish reason');
  });
});

describe('an openai channel passed through', () => {
  it('reads the usage of a Response and of the final event of its stream', () => {
    const response = {
      id: 'resp_1',
      object: 'response',
      model: 'gpt-4o-mini',
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'hi' }] }],
      usage: { input_tokens: 20, input_tokens_details: { cached_tokens: 5 }, output_tokens: 2 },
    };
    expect(responsesPassthroughUsage(Buffer.from(JSON.stringify(response)), context)).toMatchObject(
      {
        usage: { promptTokens: 20, completionTokens: 2, cachedTokens: 5 },
        model: 'gpt-4o-mini',
        completionText: 'hi',
      },
    );
    const reader = new ResponsesStreamReader();
    const stream = `event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{}}\n\nevent: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', sequence_number: 1, response })}\n\n`;
    expect(reader.push(Buffer.from(stream))).toBe('');
    expect(reader.end()).toBe('');
    expect(reader.usage).toEqual({ promptTokens: 20, completionTokens: 2, cachedTokens: 5 });
  });

  it('ends a stream cut before its final event with the next sequence number', () => {
    const reader = new ResponsesStreamReader();
    reader.push(
      Buffer.from(
        'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{}}\n\n',
      ),
    );
    expect(events(reader.end())[0]!.data).toMatchObject({
      type: 'error',
      sequence_number: 1,
      code: 'stream_interrupted',
    });
    expect(reader.failure).toContain('final event');
  });
});
