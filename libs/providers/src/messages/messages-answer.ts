import type { ReportedUsage } from '@switchyard/contracts';
import type { AnswerContext, StreamTranslator, TranslatedAnswer } from '../adapter.js';
import {
  AnthropicStreamTranslator,
  anthropicAnswer,
  type AnthropicUsage,
} from '../anthropic/anthropic-answer.js';
import { ChatChunkDecoder, type ChatStreamChunk } from '../sse.js';
import { type OpenAIUsage } from '../openai-usage.js';

// Anthropic's Messages API in front of the gateway (docs/providers.md, "Anthropic's API in
// front"): OpenAI's answer, stream and errors → Anthropic's message
// (https://docs.anthropic.com/en/api/messages), event stream
// (https://docs.anthropic.com/en/docs/build-with-claude/streaming) and errors
// (https://docs.anthropic.com/en/api/errors). An `anthropic` channel's answer is relayed as
// it came; only its usage is read.

const STOP_REASONS: Record<string, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

export function stopReason(finishReason: string | null | undefined): string {
  return STOP_REASONS[finishReason ?? ''] ?? 'end_turn';
}

function reportedUsage(usage: OpenAIUsage | null | undefined): ReportedUsage | null {
  if (typeof usage?.prompt_tokens !== 'number') return null;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    promptTokens: usage.prompt_tokens,
    completionTokens: usage.completion_tokens ?? 0,
    ...(cached > 0 ? { cachedTokens: cached } : {}),
  };
}

/** Anthropic counts the input read from the cache apart from `input_tokens`. */
function anthropicUsage(usage: ReportedUsage | null): Required<AnthropicUsage> {
  const cached = usage?.cachedTokens ?? 0;
  return {
    input_tokens: (usage?.promptTokens ?? 0) - cached,
    output_tokens: usage?.completionTokens ?? 0,
    cache_read_input_tokens: cached,
    cache_creation_input_tokens: 0,
  };
}

function messageId(completionId: unknown): string {
  const id = typeof completionId === 'string' ? completionId.replace(/^chatcmpl-/, '') : '';
  // A converted provider's answer may carry Anthropic's own id already.
  if (id.startsWith('msg_')) return id;
  return `msg_${id || Date.now().toString(36)}`;
}

/** A tool call's arguments as the `input` object; arguments that are no JSON object, `{}`. */
function toolInput(args: unknown): Record<string, unknown> {
  try {
    const input: unknown = JSON.parse(typeof args === 'string' && args !== '' ? args : '{}');
    return typeof input === 'object' && input !== null && !Array.isArray(input)
      ? (input as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

interface ChatCompletion {
  id?: string;
  model?: string;
  choices?: {
    message?: {
      content?: string | null;
      tool_calls?: { id?: string; function?: { name?: string; arguments?: string } }[];
    };
    finish_reason?: string | null;
  }[];
  usage?: OpenAIUsage;
}

/** OpenAI's chat completion as Anthropic's message; its usage read for metering. */
export function chatAnswerToMessage(body: Buffer, context: AnswerContext): TranslatedAnswer {
  const completion = JSON.parse(body.toString('utf8')) as ChatCompletion;
  const choice = completion.choices?.[0];
  const content: Record<string, unknown>[] = [];
  const text = choice?.message?.content ?? '';
  if (text !== '') content.push({ type: 'text', text });
  for (const call of choice?.message?.tool_calls ?? []) {
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.function?.name,
      input: toolInput(call.function?.arguments),
    });
  }
  const usage = reportedUsage(completion.usage);
  const model = completion.model ?? context.model;
  const message = {
    id: messageId(completion.id),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason(choice?.finish_reason),
    stop_sequence: null,
    usage: anthropicUsage(usage),
  };
  const completionText =
    text +
    (choice?.message?.tool_calls ?? [])
      .map((call) => (call.function?.name ?? '') + (call.function?.arguments ?? ''))
      .join('');
  return { body: Buffer.from(JSON.stringify(message)), usage, model, completionText };
}

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** Anthropic's error type for an HTTP status (https://docs.anthropic.com/en/api/errors). */
export function messagesErrorType(status: number): string {
  switch (status) {
    case 400:
    case 415:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

/** An error body in Anthropic's shape, which the Anthropic SDKs raise by status. */
export function messagesErrorBody(status: number, message: string): Buffer {
  return Buffer.from(
    JSON.stringify({ type: 'error', error: { type: messagesErrorType(status), message } }),
  );
}

/** An OpenAI-shaped error answer (an upstream's or an adapter's) in Anthropic's shape. */
export function chatErrorToMessagesError(status: number, body: Buffer): Buffer {
  let message = `The upstream answered ${status}.`;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') message = parsed.error.message;
  } catch {
    // Not JSON (a proxy's HTML page): keep the status-based message.
  }
  return messagesErrorBody(status, message);
}

/** The event that ends a broken stream; the Anthropic SDKs raise it as an error. */
export function messagesErrorEvent(message: string, type = 'api_error'): string {
  return event('error', { error: { type, message } });
}

/**
 * OpenAI's chunks in, Anthropic's events out: message_start, each content block opened,
 * filled and closed in turn (text, then one tool_use per tool call), then message_delta with
 * the stop reason and usage, and message_stop. The stop waits for the usage chunk (the
 * upstream is asked for it), or the end of the stream.
 */
export class ChatToMessagesStream implements StreamTranslator {
  private readonly chunks = new ChatChunkDecoder<ChatStreamChunk>({
    finished: () => Boolean(this.failure || this.stopped),
    chunk: (chunk) => this.translate(chunk),
    done: () => this.stop(),
  });
  private started = false;
  private stopped = false;
  /** Index of the open content block, and what it holds. */
  private block = -1;
  private open: 'text' | 'tool' | null = null;
  /** OpenAI tool call index → Anthropic content block index. */
  private readonly toolBlocks = new Map<number, number>();
  private finish: string | null = null;
  usage: ReportedUsage | null = null;
  failure: string | null = null;

  constructor(private readonly context: AnswerContext) {}

  push(chunk: Buffer): string {
    return this.chunks.push(chunk);
  }

  end(): string {
    if (this.failure || this.stopped) return '';
    if (this.finish === null) {
      this.failure = 'the upstream stream ended before its finish reason';
      return messagesErrorEvent(`The upstream stream was interrupted: ${this.failure}`);
    }
    return this.stop();
  }

  private translate(chunk: ChatStreamChunk): string {
    if (chunk.error) {
      this.failure = chunk.error.message ?? 'the upstream reported an error';
      return messagesErrorEvent(this.failure);
    }
    let out = this.start(chunk);
    const usage = reportedUsage(chunk.usage);
    if (usage) this.usage = usage;
    const choice = chunk.choices?.[0];
    const delta = choice?.delta ?? {};
    if (typeof delta.content === 'string' && delta.content !== '') {
      if (this.open !== 'text') out += this.openBlock('text', { type: 'text', text: '' });
      out += this.delta({ type: 'text_delta', text: delta.content });
    }
    for (const call of delta.tool_calls ?? []) {
      const index = call.index ?? 0;
      let block = this.toolBlocks.get(index);
      if (block === undefined) {
        out += this.openBlock('tool', {
          type: 'tool_use',
          id: call.id,
          name: call.function?.name,
          input: {},
        });
        block = this.block;
        this.toolBlocks.set(index, block);
      }
      const args = call.function?.arguments;
      if (args)
        out += event('content_block_delta', {
          index: block,
          delta: { type: 'input_json_delta', partial_json: args },
        });
    }
    if (choice?.finish_reason) this.finish = choice.finish_reason;
    return out;
  }

  private start(chunk: ChatStreamChunk): string {
    if (this.started) return '';
    this.started = true;
    return event('message_start', {
      message: {
        id: messageId(chunk.id),
        type: 'message',
        role: 'assistant',
        model: chunk.model ?? this.context.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // OpenAI counts once the answer is over: the exact figures come with message_delta.
        // Anthropic states the input here, and some clients read it only here (LangChain),
        // so the edge's estimate stands in until then.
        usage: { input_tokens: this.context.inputTokensEstimate ?? 0, output_tokens: 0 },
      },
    });
  }

  private openBlock(kind: 'text' | 'tool', contentBlock: Record<string, unknown>): string {
    const out = this.closeBlock();
    this.block += 1;
    this.open = kind;
    return out + event('content_block_start', { index: this.block, content_block: contentBlock });
  }

  private closeBlock(): string {
    if (this.open === null) return '';
    this.open = null;
    return event('content_block_stop', { index: this.block });
  }

  private delta(delta: Record<string, unknown>): string {
    return event('content_block_delta', { index: this.block, delta });
  }

  private stop(): string {
    if (this.stopped) return '';
    this.stopped = true;
    return (
      this.start({}) +
      this.closeBlock() +
      event('message_delta', {
        delta: { stop_reason: stopReason(this.finish), stop_sequence: null },
        usage: anthropicUsage(this.usage),
      }) +
      event('message_stop', {})
    );
  }
}

/**
 * An `anthropic` channel's answer relayed as it came: its usage (cache reads and writes
 * included) read with the anthropic adapter's translator.
 */
export function messagesPassthroughUsage(body: Buffer, context: AnswerContext): TranslatedAnswer {
  const read = anthropicAnswer(body, context);
  return { ...read, body };
}

/**
 * Reads an `anthropic` channel's stream relayed byte for byte: nothing is written but the
 * error event that ends a stream cut before its message_stop.
 */
export class AnthropicStreamReader implements StreamTranslator {
  private readonly translator: AnthropicStreamTranslator;

  constructor(context: AnswerContext) {
    this.translator = new AnthropicStreamTranslator(context);
  }

  get usage(): ReportedUsage | null {
    return this.translator.usage;
  }

  get failure(): string | null {
    return this.translator.failure;
  }

  push(chunk: Buffer): string {
    this.translator.push(chunk);
    return '';
  }

  end(): string {
    if (this.translator.failure) return '';
    this.translator.end();
    return this.translator.failure
      ? messagesErrorEvent(`The upstream stream was interrupted: ${this.translator.failure}`)
      : '';
  }
}
