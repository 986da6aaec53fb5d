import { randomBytes } from 'node:crypto';
import { approximateTokens, pieces } from '../openai/completion.js';
import { schemaArguments, schemaValue } from '../structured/schema-value.js';

// How the mock answers the Messages API: it echoes the last user text, or the content of
// the last tool result; it calls the first offered tool (or the one tool_choice names),
// with input valid against its schema, unless the turn answers a tool call; under
// structured outputs (`output_config.format`, or the beta's `output_format`) its text is
// JSON valid against the format's schema. The system prompt counts as read from the prompt
// cache, so usage always shows cache reads when a system prompt is sent.

export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: { role: 'user' | 'assistant'; content: string | Block[] }[];
  system?: string | Block[];
  tools?: { name: string; input_schema?: unknown }[];
  tool_choice?: { type: 'auto' | 'any' | 'tool' | 'none'; name?: string };
  stream?: boolean;
  /** Structured outputs: the text answer is JSON valid against `schema`. */
  output_format?: OutputFormat;
  output_config?: { format?: OutputFormat };
}

interface OutputFormat {
  type: string;
  schema?: unknown;
}

interface Block {
  type: string;
  text?: string;
  id?: string;
  tool_use_id?: string;
  content?: string | Block[];
}

export type MessageAnswer =
  | { kind: 'text'; text: string }
  | { kind: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Where a list of content blocks holds something that is no block, in Anthropic's words. */
function invalidBlocks(blocks: unknown[], path: string): string | null {
  const index = blocks.findIndex((block) => !isObject(block) || typeof block.type !== 'string');
  return index < 0 ? null : `${path}.${index}: Input should be a valid dictionary`;
}

/** A tool result holds text or a list of blocks. */
function invalidToolResultContent(content: unknown, index: number): string | null {
  if (typeof content === 'string') return null;
  const path = `messages.${index}.content.tool_result.content`;
  if (!Array.isArray(content)) return `${path}: Input should be a valid list`;
  return invalidBlocks(content, path);
}

/**
 * What Anthropic would refuse with a 400, or null when the request is well formed. The
 * shapes the mock reads are checked, as Anthropic checks them, so that bad input is the
 * caller's 400 rather than the mock's 500.
 */
export function invalidMessages(body: unknown): string | null {
  const request = body as Partial<MessagesRequest> | null;
  if (typeof request?.model !== 'string') return 'model: Field required';
  if (!Number.isInteger(request.max_tokens) || (request.max_tokens ?? 0) < 1)
    return 'max_tokens: Field required';
  if (!Array.isArray(request.messages) || request.messages.length === 0)
    return 'messages: at least one message is required';
  const { system, tools, tool_choice: choice } = request as Record<string, unknown>;
  if (system != null && typeof system !== 'string') {
    if (!Array.isArray(system)) return 'system: Input should be a valid list';
    const invalid = invalidBlocks(system, 'system');
    if (invalid) return invalid;
  }
  if (tools != null) {
    if (!Array.isArray(tools)) return 'tools: Input should be a valid list';
    const index = tools.findIndex((tool) => !isObject(tool) || typeof tool.name !== 'string');
    if (index >= 0) return `tools.${index}.name: Field required`;
  }
  if (choice != null && !(isObject(choice) && typeof choice.type === 'string'))
    return 'tool_choice: Input should be a valid dictionary';
  if (isObject(choice) && choice.type === 'tool' && typeof choice.name !== 'string')
    return 'tool_choice.tool.name: Field required';
  const outputConfig = (request as Record<string, unknown>).output_config;
  for (const [path, format] of [
    ['output_format', (request as Record<string, unknown>).output_format],
    ['output_config.format', isObject(outputConfig) ? outputConfig.format : undefined],
  ] as const) {
    if (format == null) continue;
    if (!isObject(format) || format.type !== 'json_schema')
      return `${path}.type: Input should be 'json_schema'`;
    if (!isObject(format.schema)) return `${path}.schema: Field required`;
  }
  const toolUses = new Set<string>();
  for (const [index, message] of request.messages.entries()) {
    if (message?.role !== 'user' && message?.role !== 'assistant')
      return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    if (typeof message.content === 'string') continue;
    if (!Array.isArray(message.content)) return `messages.${index}.content: Field required`;
    const invalid = invalidBlocks(message.content, `messages.${index}.content`);
    if (invalid) return invalid;
    for (const block of message.content) {
      if (block.type === 'tool_result' && block.content != null) {
        const invalidContent = invalidToolResultContent(block.content, index);
        if (invalidContent) return invalidContent;
      }
      if (block.type === 'tool_use' && block.id) toolUses.add(block.id);
      if (block.type === 'tool_result' && !toolUses.has(block.tool_use_id ?? ''))
        return `messages.${index}: tool_result block(s) provided without a preceding tool_use with id ${block.tool_use_id}`;
      if (block.type === 'text' && !block.text)
        return `messages.${index}: text content blocks must be non-empty`;
    }
  }
  return null;
}

function textOf(content: string | Block[] | undefined): string {
  if (typeof content === 'string') return content;
  return (content ?? [])
    .map((block) => (block.type === 'text' ? (block.text ?? '') : textOf(block.content)))
    .join('');
}

export function promptTokensOf(request: MessagesRequest): { input: number; cached: number } {
  const cached = approximateTokens(textOf(request.system));
  const input = approximateTokens(request.messages.map((m) => textOf(m.content)).join('\n'));
  return { input, cached };
}

export function answerMessages(request: MessagesRequest, reply?: string): MessageAnswer {
  const last = request.messages.at(-1)!;
  const blocks = typeof last.content === 'string' ? [] : last.content;
  const result = blocks.find((b) => b.type === 'tool_result');
  if (result) return { kind: 'text', text: reply ?? `Echo: ${textOf(result.content)}` };
  const tools = request.tools ?? [];
  const choice = request.tool_choice;
  if (tools.length > 0 && choice?.type !== 'none') {
    const tool = tools.find((t) => t.name === choice?.name) ?? tools[0]!;
    return {
      kind: 'tool_use',
      id: `toolu_${randomBytes(12).toString('hex')}`,
      name: tool.name,
      input: schemaArguments(tool.input_schema),
    };
  }
  const format = request.output_config?.format ?? request.output_format;
  if (reply === undefined && format?.type === 'json_schema')
    return { kind: 'text', text: JSON.stringify(schemaValue(format.schema ?? {})) };
  return { kind: 'text', text: reply ?? `Echo: ${textOf(last.content)}` };
}

export function outputTokensOf(answer: MessageAnswer): number {
  return answer.kind === 'text'
    ? approximateTokens(answer.text)
    : approximateTokens(answer.name + JSON.stringify(answer.input));
}

export function messageId(): string {
  return `msg_${randomBytes(12).toString('hex')}`;
}

interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export function messageBody(
  id: string,
  model: string,
  answer: MessageAnswer,
  usage: Usage,
): unknown {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content:
      answer.kind === 'text'
        ? [{ type: 'text', text: answer.text }]
        : [{ type: 'tool_use', id: answer.id, name: answer.name, input: answer.input }],
    stop_reason: answer.kind === 'text' ? 'end_turn' : 'tool_use',
    stop_sequence: null,
    usage,
  };
}

/** The documented event order: message_start, content blocks, message_delta, message_stop. */
export function messageEvents(
  id: string,
  model: string,
  answer: MessageAnswer,
  usage: Usage,
): string[] {
  const event = (type: string, data: Record<string, unknown>): string =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const events = [
    event('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    }),
  ];
  if (answer.kind === 'text') {
    events.push(
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    );
    events.push(event('ping', {}));
    for (const piece of pieces(answer.text))
      events.push(
        event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } }),
      );
  } else {
    events.push(
      event('content_block_start', {
        index: 0,
        content_block: { type: 'tool_use', id: answer.id, name: answer.name, input: {} },
      }),
    );
    const json = JSON.stringify(answer.input);
    const half = Math.ceil(json.length / 2);
    for (const part of ['', json.slice(0, half), json.slice(half)])
      events.push(
        event('content_block_delta', {
          index: 0,
          delta: { type: 'input_json_delta', partial_json: part },
        }),
      );
  }
  events.push(event('content_block_stop', { index: 0 }));
  events.push(
    event('message_delta', {
      delta: { stop_reason: answer.kind === 'text' ? 'end_turn' : 'tool_use', stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
  );
  events.push(event('message_stop', {}));
  return events;
}
