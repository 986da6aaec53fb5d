import type { ReportedUsage } from '@switchyard/contracts';
import type {
  AnswerContext,
  StreamTranslator,
  TranslatedAnswer,
  TranslatedError,
} from '../adapter.js';
import { openAIErrorBody } from '../openai-errors.js';
import { openAIUsage } from '../openai-usage.js';
import { DONE_EVENT, EventStreamDecoder, dataEvent, errorEvent } from '../sse.js';

// Anthropic Messages API answers → OpenAI chat completions: the JSON answer, the event
// stream (https://docs.anthropic.com/en/docs/build-with-claude/streaming) and errors
// (https://docs.anthropic.com/en/api/errors).

export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

interface ContentBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
}

interface AnthropicMessage {
  id?: string;
  model?: string;
  content?: ContentBlock[];
  stop_reason?: string | null;
  usage?: AnthropicUsage;
}

const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export function finishReason(stopReason: string | null | undefined): string {
  return FINISH_REASONS[stopReason ?? ''] ?? 'stop';
}

/**
 * Anthropic counts cached input apart from `input_tokens`; OpenAI's `prompt_tokens` holds
 * all input, with the cached part in `prompt_tokens_details.cached_tokens`.
 */
export function usageOf(usage: AnthropicUsage): ReportedUsage {
  const cached = usage.cache_read_input_tokens ?? 0;
  const written = usage.cache_creation_input_tokens ?? 0;
  return {
    promptTokens: (usage.input_tokens ?? 0) + cached + written,
    completionTokens: usage.output_tokens ?? 0,
    cachedTokens: cached,
  };
}

function completionId(id: string | undefined): string {
  return `chatcmpl-${id ?? Date.now().toString(36)}`;
}

export function anthropicAnswer(body: Buffer, context: AnswerContext): TranslatedAnswer {
  const message = JSON.parse(body.toString('utf8')) as AnthropicMessage;
  let text = '';
  const toolCalls: Record<string, unknown>[] = [];
  for (const block of message.content ?? []) {
    if (block.type === 'text') text += block.text ?? '';
    if (block.type === 'tool_use') {
      toolCalls.push({
        id: block.id,
        type: 'function',
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const usage = message.usage ? usageOf(message.usage) : null;
  const model = message.model ?? context.model;
  const completion = {
    id: completionId(message.id),
    object: 'chat.completion',
    created: context.created,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text === '' && toolCalls.length > 0 ? null : text,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReason(message.stop_reason),
      },
    ],
    ...(usage ? { usage: openAIUsage(usage) } : {}),
  };
  const completionText =
    text + toolCalls.map((c) => JSON.stringify((c as { function: unknown }).function)).join('');
  return { body: Buffer.from(JSON.stringify(completion)), usage, model, completionText };
}

interface StreamEvent {
  type: string;
  index?: number;
  message?: AnthropicMessage;
  content_block?: ContentBlock;
  delta?: {
    type?: string;
    text?: string;
    partial_json?: string;
    stop_reason?: string | null;
  };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

/** Translates one Anthropic event stream, keeping content blocks and tool calls in order. */
export class AnthropicStreamTranslator implements StreamTranslator {
  private readonly decoder = new EventStreamDecoder();
  private id = completionId(undefined);
  private model: string;
  private readonly reported: AnthropicUsage = {};
  /** Content block index → OpenAI tool call index (tool calls are numbered from 0). */
  private readonly toolIndex = new Map<number, number>();
  private finish: string | null = null;
  private stopped = false;
  usage: ReportedUsage | null = null;
  failure: string | null = null;

  constructor(private readonly context: AnswerContext) {
    this.model = context.model;
  }

  push(chunk: Buffer): string {
    let out = '';
    for (const event of this.decoder.feedJson<StreamEvent>(chunk)) {
      if (this.failure) break;
      out += this.translate(event);
    }
    return out;
  }

  end(): string {
    if (this.failure) return '';
    if (!this.stopped) {
      this.failure = 'the upstream stream ended before its message_stop event';
      return errorEvent(
        `The upstream stream was interrupted: ${this.failure}`,
        'stream_interrupted',
      );
    }
    return DONE_EVENT;
  }

  private chunk(delta: Record<string, unknown>, finishReason: string | null = null): string {
    return dataEvent({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.context.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      ...(this.context.includeUsage ? { usage: null } : {}),
    });
  }

  private translate(event: StreamEvent): string {
    switch (event.type) {
      case 'message_start': {
        const message = event.message ?? {};
        this.id = completionId(message.id);
        if (message.model) this.model = message.model;
        Object.assign(this.reported, message.usage);
        return this.chunk({ role: 'assistant', content: '' });
      }
      case 'content_block_start': {
        const block = event.content_block;
        if (block?.type === 'tool_use') {
          const index = this.toolIndex.size;
          this.toolIndex.set(event.index ?? 0, index);
          return this.chunk({
            tool_calls: [
              {
                index,
                id: block.id,
                type: 'function',
                function: { name: block.name, arguments: '' },
              },
            ],
          });
        }
        if (block?.type === 'text' && block.text) return this.chunk({ content: block.text });
        return '';
      }
      case 'content_block_delta': {
        const delta = event.delta ?? {};
        if (delta.type === 'text_delta' && delta.text) return this.chunk({ content: delta.text });
        if (delta.type === 'input_json_delta' && delta.partial_json) {
          const index = this.toolIndex.get(event.index ?? 0);
          if (index === undefined) return '';
          return this.chunk({
            tool_calls: [{ index, function: { arguments: delta.partial_json } }],
          });
        }
        return '';
      }
      case 'message_delta': {
        // Its usage is cumulative; servers may also repeat the input counts here.
        for (const [name, value] of Object.entries(event.usage ?? {})) {
          if (typeof value === 'number') (this.reported as Record<string, number>)[name] = value;
        }
        this.finish = finishReason(event.delta?.stop_reason);
        return '';
      }
      case 'message_stop': {
        this.stopped = true;
        this.usage = usageOf(this.reported);
        let out = this.chunk({}, this.finish ?? 'stop');
        if (this.context.includeUsage) {
          out += dataEvent({
            id: this.id,
            object: 'chat.completion.chunk',
            created: this.context.created,
            model: this.model,
            choices: [],
            usage: openAIUsage(this.usage),
          });
        }
        return out;
      }
      case 'error': {
        const type = event.error?.type ?? 'api_error';
        this.failure = `${type}: ${event.error?.message ?? 'the upstream reported an error'}`;
        return errorEvent(
          `The upstream stream was interrupted: ${this.failure}`,
          'stream_interrupted',
        );
      }
      default:
        // ping, content_block_stop, and event types added later.
        return '';
    }
  }
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

export function anthropicError(status: number, body: Buffer): TranslatedError {
  let type = ERROR_TYPES[status] ?? 'api_error';
  let message = `The upstream answered ${status}.`;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as {
      error?: { type?: unknown; message?: unknown };
    };
    if (typeof parsed.error?.type === 'string') type = parsed.error.type;
    if (typeof parsed.error?.message === 'string') message = parsed.error.message;
  } catch {
    // Not JSON (a proxy's HTML page): keep the status-based message.
  }
  return { body: openAIErrorBody(message, type, type), message };
}
