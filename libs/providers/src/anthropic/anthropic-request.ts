import { type ChatMessage, type ContentPart } from '@switchyard/contracts';
import {
  completionBudget,
  dataUrlImage,
  functionTools,
  imageUrlOf,
  invalid,
  refuseUnconvertible,
  stopSequences,
  textOf,
  toolArguments,
} from '../openai-request.js';

// OpenAI chat-completion request → Anthropic Messages API request
// (https://docs.anthropic.com/en/api/messages).

type Block = Record<string, unknown>;

interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: Block[];
}

/**
 * A tool message's output as a tool_result's content. An output that is only an error
 * object, `{"error": …}` (how a failed call is written in OpenAI's format, and how a
 * /v1/messages `is_error` result travels: docs/providers.md), is the error it holds.
 */
function toolResult(message: ChatMessage): { content: string; is_error?: true } {
  const text = textOf(message.content);
  try {
    const parsed: unknown = JSON.parse(text);
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      !Array.isArray(parsed) &&
      Object.keys(parsed).length === 1 &&
      'error' in parsed
    ) {
      const { error } = parsed;
      return { content: typeof error === 'string' ? error : JSON.stringify(error), is_error: true };
    }
  } catch {
    // Plain text: the output as it is.
  }
  return { content: text };
}

/** Anthropic requires `max_tokens`; when the client names none, the model's documented output limit. */
export function defaultMaxTokens(model: string): number {
  if (/claude-3-5|claude-3\.5/.test(model)) return 8192;
  if (/opus-4/.test(model)) return 32_000;
  if (/claude-3-7|sonnet-4|haiku-4/.test(model)) return 64_000;
  return 4096;
}

function imageBlock(url: string, param: string): Block {
  const data = dataUrlImage(url);
  if (data)
    return {
      type: 'image',
      source: { type: 'base64', media_type: data.mediaType, data: data.data },
    };
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw invalid('An image must be a data URL (base64) or an http(s) URL.', param);
}

function contentBlocks(content: ChatMessage['content'], param: string): Block[] {
  if (content === null || content === undefined) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return content.flatMap((part: ContentPart, index): Block[] => {
    const where = `${param}[${index}]`;
    if (part.type === 'text') {
      const text = (part as { text?: unknown }).text;
      return typeof text === 'string' && text !== '' ? [{ type: 'text', text }] : [];
    }
    if (part.type === 'image_url') {
      return [imageBlock(imageUrlOf(part, where), where)];
    }
    throw invalid(`Content parts of type \`${part.type}\` cannot be sent to this model.`, where);
  });
}

function toolUse(call: NonNullable<ChatMessage['tool_calls']>[number], param: string): Block {
  return {
    type: 'tool_use',
    id: call.id,
    name: call.function?.name,
    input: toolArguments(call, param),
  };
}

/** Messages in Anthropic's alternation: consecutive turns of one role become one turn. */
function conversation(messages: ChatMessage[]): { system: Block[]; messages: AnthropicMessage[] } {
  const system: Block[] = [];
  const turns: AnthropicMessage[] = [];
  const add = (role: AnthropicMessage['role'], blocks: Block[]): void => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  messages.forEach((message, index) => {
    const param = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...contentBlocks(message.content, `${param}.content`));
        return;
      case 'user':
        add('user', contentBlocks(message.content, `${param}.content`));
        return;
      case 'assistant':
        add('assistant', [
          ...contentBlocks(message.content, `${param}.content`),
          ...(message.tool_calls ?? []).map((call, i) =>
            toolUse(call, `${param}.tool_calls[${i}]`),
          ),
        ]);
        return;
      case 'tool':
        if (typeof message.tool_call_id !== 'string')
          throw invalid('A tool message needs its `tool_call_id`.', `${param}.tool_call_id`);
        add('user', [
          { type: 'tool_result', tool_use_id: message.tool_call_id, ...toolResult(message) },
        ]);
        return;
      default:
        throw invalid(
          `Messages with role \`${message.role}\` cannot be sent to this model; use tools and tool messages.`,
          `${param}.role`,
        );
    }
  });
  return { system, messages: turns };
}

function tools(value: unknown): Block[] | undefined {
  return functionTools(value)?.map(({ name, description, parameters }) => ({
    name,
    ...(description !== undefined ? { description } : {}),
    input_schema: parameters ?? { type: 'object', properties: {} },
  }));
}

function toolChoice(value: unknown, parallel: unknown): Block | undefined {
  const serial = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (value === undefined || value === null)
    return parallel === false ? { type: 'auto', ...serial } : undefined;
  if (value === 'auto') return { type: 'auto', ...serial };
  if (value === 'required') return { type: 'any', ...serial };
  if (value === 'none') return { type: 'none' };
  const named = (value as { function?: { name?: unknown } }).function?.name;
  if (typeof named === 'string') return { type: 'tool', name: named, ...serial };
  throw invalid("'tool_choice' must be auto, required, none or a named function.", 'tool_choice');
}

export function toAnthropicRequest(
  body: Record<string, unknown>,
  model: string,
  stream: boolean,
): Record<string, unknown> {
  refuseUnconvertible(body);
  const format = (body.response_format as { type?: unknown } | undefined)?.type;
  if (format !== undefined && format !== 'text')
    throw invalid(
      '`response_format` other than text is not supported by this model.',
      'response_format',
    );
  const { system, messages } = conversation(body.messages as ChatMessage[]);
  const request: Record<string, unknown> = {
    model,
    messages,
    max_tokens: completionBudget(body) ?? defaultMaxTokens(model),
  };
  if (system.length > 0) request.system = system;
  const stop = stopSequences(body.stop);
  if (stop) request.stop_sequences = stop;
  for (const name of ['temperature', 'top_p'] as const) {
    if (typeof body[name] === 'number') request[name] = body[name];
  }
  const declared = tools(body.tools);
  if (declared) request.tools = declared;
  const choice = toolChoice(body.tool_choice, body.parallel_tool_calls);
  if (choice && declared) request.tool_choice = choice;
  if (typeof body.user === 'string') request.metadata = { user_id: body.user };
  if (stream) request.stream = true;
  return request;
}
