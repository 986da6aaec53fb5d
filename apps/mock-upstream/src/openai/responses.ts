import { randomBytes } from 'node:crypto';
import type { ChatCompletionRequest, ChatMessage } from '@switchyard/contracts';
import {
  answer,
  approximateTokens,
  invalidFormat,
  pieces,
  promptText,
  type Answer,
} from './completion.js';

// How the mock answers OpenAI's Responses API: the same answer as a chat completion of the
// same conversation (it echoes the last user text, calls an offered function tool, quotes
// the last function output, answers JSON valid against `text.format`'s schema), as a Response object or the documented event stream. What it
// does not model (stored responses, built-in tools) it accepts and echoes in the Response,
// so a test sees the field arrived.

export interface ResponsesRequest {
  model: string;
  input: string | Record<string, unknown>[];
  instructions?: string;
  tools?: { type: string; name?: string; parameters?: unknown }[];
  tool_choice?: unknown;
  stream?: boolean;
  previous_response_id?: string;
  store?: boolean;
  /** Run after the answer: it says `queued`, and a read of the stored response completes it. */
  background?: boolean;
  /** `format` shapes the answer: text, or JSON (`json_object`, `json_schema`). */
  text?: { format?: unknown };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** OpenAI's wording for a field of the wrong type. */
function wrongType(param: string, expected: string, value: unknown): string {
  const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
  return `Invalid type for '${param}': expected ${expected}, but got ${got} instead.`;
}

/** A text field or a list of parts, as message content and function outputs are. */
function invalidParts(value: unknown, param: string): string | null {
  if (value === undefined || typeof value === 'string') return null;
  if (!Array.isArray(value)) return wrongType(param, 'a string or an array of parts', value);
  const index = value.findIndex((part) => !isObject(part));
  return index < 0 ? null : wrongType(`${param}[${index}]`, 'an object', value[index]);
}

/**
 * What OpenAI would refuse with a 400, or null when the request is well formed. The shapes
 * the mock reads are checked, as OpenAI checks them, so that bad input is the caller's 400
 * rather than the mock's 500.
 */
export function invalidResponses(body: unknown): string | null {
  const request = body as Partial<ResponsesRequest> | null;
  if (typeof request?.model !== 'string') return "Missing required parameter: 'model'.";
  const { input, instructions, tools } = request;
  if (typeof input !== 'string' && !Array.isArray(input) && !request.previous_response_id)
    return "Missing required parameter: 'input'.";
  if (instructions != null && typeof instructions !== 'string')
    return wrongType('instructions', 'a string', instructions);
  if (Array.isArray(input))
    for (const [index, item] of input.entries()) {
      if (!isObject(item)) return wrongType(`input[${index}]`, 'an object', item);
      const invalid =
        invalidParts(item.content, `input[${index}].content`) ??
        invalidParts(item.output, `input[${index}].output`);
      if (invalid) return invalid;
    }
  if (request.text != null) {
    if (typeof request.text !== 'object' || Array.isArray(request.text))
      return wrongType('text', 'an object', request.text);
    const invalid = invalidFormat(request.text.format, 'text.format', false);
    if (invalid) return invalid;
  }
  if (tools != null) {
    if (!Array.isArray(tools)) return wrongType('tools', 'an array', tools);
    const index = tools.findIndex((tool) => !isObject(tool) || typeof tool.type !== 'string');
    if (index >= 0) return `Missing required parameter: 'tools[${index}].type'.`;
  }
  return null;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as { text?: unknown }[])
    .map((part) => (typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/** The conversation as chat messages, so the chat mock decides the answer. */
function asChat(request: ResponsesRequest): ChatCompletionRequest {
  const messages: ChatMessage[] = [];
  if (request.instructions) messages.push({ role: 'system', content: request.instructions });
  const items =
    typeof request.input === 'string'
      ? [{ role: 'user', content: request.input }]
      : (request.input ?? []);
  for (const item of items) {
    if (item.type === 'function_call')
      messages.push({
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: String(item.call_id),
            type: 'function',
            function: { name: String(item.name), arguments: String(item.arguments) },
          },
        ],
      });
    else if (item.type === 'function_call_output')
      messages.push({
        role: 'tool',
        tool_call_id: String(item.call_id),
        content: textOf(item.output),
      });
    else if (item.type === undefined || item.type === 'message')
      messages.push({ role: item.role as 'user', content: textOf(item.content) });
  }
  const tools = (request.tools ?? [])
    .filter((tool) => tool.type === 'function' && typeof tool.name === 'string')
    .map((tool) => ({
      type: 'function' as const,
      function: { name: tool.name!, parameters: tool.parameters },
    }));
  const choice = request.tool_choice as { type?: string; name?: string } | string | undefined;
  return {
    model: request.model,
    messages,
    ...(tools.length > 0 ? { tools } : {}),
    ...(request.text?.format ? { response_format: request.text.format } : {}),
    ...(typeof choice === 'object' && choice?.name
      ? { tool_choice: { type: 'function', function: { name: choice.name } } }
      : {}),
  } as ChatCompletionRequest;
}

export interface ResponsesAnswer {
  result: Answer;
  inputTokens: number;
  outputTokens: number;
}

export function answerResponses(request: ResponsesRequest, reply?: string): ResponsesAnswer {
  const chat = asChat(request);
  const result =
    chat.messages.length > 0
      ? answer(chat, reply)
      : { kind: 'text' as const, content: reply ?? 'Echo: ' };
  const output =
    result.kind === 'text'
      ? result.content
      : result.kind === 'tool_call'
        ? result.call.function.name + result.call.function.arguments
        : '';
  return {
    result,
    inputTokens: approximateTokens(promptText(chat.messages)),
    outputTokens: approximateTokens(output),
  };
}

function id(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

/** A new Response id, as OpenAI's look (`resp_…`). */
export function responseIdOf(): string {
  return id('resp');
}

function outputItem(result: Answer, itemId: string): Record<string, unknown> {
  if (result.kind === 'tool_call')
    return {
      id: itemId,
      type: 'function_call',
      status: 'completed',
      call_id: result.call.id,
      name: result.call.function.name,
      arguments: result.call.function.arguments,
    };
  return {
    id: itemId,
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [
      { type: 'output_text', text: result.kind === 'text' ? result.content : '', annotations: [] },
    ],
  };
}

/** A Response object; it echoes the fields it does not model, to show they arrived. */
export function responseBody(
  request: ResponsesRequest,
  model: string,
  answered: ResponsesAnswer,
  status: 'queued' | 'in_progress' | 'completed' = 'completed',
  output: Record<string, unknown>[] = [outputItem(answered.result, id('item'))],
  responseId = id('resp'),
): Record<string, unknown> {
  return {
    id: responseId,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    error: null,
    incomplete_details: null,
    instructions: request.instructions ?? null,
    model,
    output: status === 'completed' ? output : [],
    parallel_tool_calls: true,
    previous_response_id: request.previous_response_id ?? null,
    store: request.store ?? true,
    background: request.background ?? false,
    tools: request.tools ?? [],
    tool_choice: request.tool_choice ?? 'auto',
    text: request.text ?? { format: { type: 'text' } },
    usage:
      status === 'completed'
        ? {
            input_tokens: answered.inputTokens,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: answered.outputTokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: answered.inputTokens + answered.outputTokens,
          }
        : null,
  };
}

/** The documented event order, each event numbered. */
export function responseEvents(
  request: ResponsesRequest,
  model: string,
  answered: ResponsesAnswer,
  responseId = responseIdOf(),
): string[] {
  let sequence = 0;
  const event = (type: string, data: Record<string, unknown>): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`;
  const itemId = id('item');
  const item = outputItem(answered.result, itemId);
  const started = responseBody(request, model, answered, 'in_progress', [], responseId);
  const events = [
    event('response.created', { response: started }),
    event('response.in_progress', { response: started }),
  ];
  const { result } = answered;
  if (result.kind === 'tool_call') {
    events.push(
      event('response.output_item.added', {
        output_index: 0,
        item: { ...item, status: 'in_progress', arguments: '' },
      }),
    );
    for (const piece of pieces(result.call.function.arguments))
      events.push(
        event('response.function_call_arguments.delta', {
          item_id: itemId,
          output_index: 0,
          delta: piece,
        }),
      );
    events.push(
      event('response.function_call_arguments.done', {
        item_id: itemId,
        output_index: 0,
        arguments: result.call.function.arguments,
      }),
    );
  } else {
    const text = result.kind === 'text' ? result.content : '';
    const place = { item_id: itemId, output_index: 0, content_index: 0 };
    events.push(
      event('response.output_item.added', {
        output_index: 0,
        item: { ...item, status: 'in_progress', content: [] },
      }),
      event('response.content_part.added', {
        ...place,
        part: { type: 'output_text', text: '', annotations: [] },
      }),
    );
    for (const piece of pieces(text))
      events.push(event('response.output_text.delta', { ...place, delta: piece, logprobs: [] }));
    events.push(
      event('response.output_text.done', { ...place, text, logprobs: [] }),
      event('response.content_part.done', {
        ...place,
        part: { type: 'output_text', text, annotations: [] },
      }),
    );
  }
  events.push(event('response.output_item.done', { output_index: 0, item }));
  events.push(
    event('response.completed', {
      response: responseBody(request, model, answered, 'completed', [item], responseId),
    }),
  );
  return events;
}
