import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import type { ReportedUsage } from '@switchyard/contracts';
import type {
  AnswerContext,
  StreamTranslator,
  TranslatedAnswer,
  TranslatedError,
} from '../adapter.js';
import { openAIErrorBody } from '../openai-errors.js';
import { openAIUsage } from '../openai-usage.js';
import { DONE_EVENT, dataEvent, errorEvent } from '../sse.js';

// Bedrock Converse answers → OpenAI chat completions: the JSON answer, the ConverseStream
// event stream (`application/vnd.amazon.eventstream`, each event a binary frame whose
// `:event-type` header names it) and errors
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html).

export interface ConverseUsage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

interface ContentBlock {
  text?: string;
  toolUse?: { toolUseId?: string; name?: string; input?: unknown };
  reasoningContent?: unknown;
}

interface ConverseResponse {
  output?: { message?: { content?: ContentBlock[] } };
  stopReason?: string;
  usage?: ConverseUsage;
}

const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

export function finishReason(stopReason: string | undefined): string {
  return FINISH_REASONS[stopReason ?? ''] ?? 'stop';
}

/**
 * Converse's `inputTokens` leaves out the prompt-cache reads and writes; OpenAI's
 * `prompt_tokens` holds all input, the cache reads as `cached_tokens`.
 */
export function usageOf(usage: ConverseUsage): ReportedUsage {
  const cacheRead = usage.cacheReadInputTokens ?? 0;
  return {
    promptTokens: (usage.inputTokens ?? 0) + cacheRead + (usage.cacheWriteInputTokens ?? 0),
    completionTokens: usage.outputTokens ?? 0,
    cachedTokens: cacheRead,
  };
}

/** Converse answers carry no id: one is made per answer. */
function completionId(): string {
  return `chatcmpl-bedrock-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
}

interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export function bedrockAnswer(body: Buffer, context: AnswerContext): TranslatedAnswer {
  const response = JSON.parse(body.toString('utf8')) as ConverseResponse;
  let text = '';
  const toolCalls: ToolCall[] = [];
  // Reasoning blocks are the model's thinking, not the answer.
  for (const block of response.output?.message?.content ?? []) {
    if (typeof block.text === 'string') text += block.text;
    if (block.toolUse)
      toolCalls.push({
        id: block.toolUse.toolUseId ?? `call_${toolCalls.length}`,
        type: 'function',
        function: {
          name: block.toolUse.name ?? '',
          arguments: JSON.stringify(block.toolUse.input ?? {}),
        },
      });
  }
  const usage = response.usage ? usageOf(response.usage) : null;
  const completion = {
    id: completionId(),
    object: 'chat.completion',
    created: context.created,
    model: context.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text === '' && toolCalls.length > 0 ? null : text,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: finishReason(response.stopReason),
      },
    ],
    ...(usage ? { usage: openAIUsage(usage) } : {}),
  };
  const completionText = text + toolCalls.map((call) => JSON.stringify(call.function)).join('');
  return {
    body: Buffer.from(JSON.stringify(completion)),
    usage,
    model: context.model,
    completionText,
  };
}

/** A header AWS sends as a string (message and error kinds), or the fallback when absent. */
function stringHeader(
  headers: Record<string, { type: string; value: unknown }>,
  name: string,
  fallback: string,
): string {
  const value = headers[name]?.value;
  return typeof value === 'string' ? value : fallback;
}

interface StreamEvent {
  contentBlockIndex?: number;
  start?: { toolUse?: { toolUseId?: string; name?: string } };
  delta?: { text?: string; toolUse?: { input?: string } };
  stopReason?: string;
  usage?: ConverseUsage;
  message?: string;
}

/**
 * Translates one ConverseStream. The order is documented: `messageStart`, per content block
 * `contentBlockStart` (tool use only), `contentBlockDelta`s and `contentBlockStop`, then
 * `messageStop` with the stop reason and `metadata` with the usage. The finish chunk goes
 * out at `messageStop`, the usage chunk and `[DONE]` once `metadata` has come too; a stream
 * that ends before both, or with an exception frame, was cut and says so.
 */
export class BedrockStreamTranslator implements StreamTranslator {
  private readonly codec = new EventStreamCodec(toUtf8, fromUtf8);
  /** Bytes of a frame not complete yet: the network splits frames anywhere. */
  private pending: Buffer = Buffer.alloc(0);
  private readonly id = completionId();
  /** Converse's content block index → OpenAI's tool call index, numbered from 0. */
  private readonly toolIndexes = new Map<number, number>();
  private started = false;
  private stopped = false;
  /** The `metadata` event, with the usage, has come. */
  private reported = false;
  private done = false;
  usage: ReportedUsage | null = null;
  failure: string | null = null;

  constructor(private readonly context: AnswerContext) {}

  push(chunk: Buffer): string {
    let out = '';
    try {
      for (const frame of this.frames(chunk)) {
        if (this.failure || this.done) break;
        // The codec checks the frame's checksums and decodes its headers.
        const message = this.codec.decode(frame);
        out += this.translate(message.headers, message.body);
      }
    } catch (error) {
      // A frame whose length or checksum is wrong: the stream is broken.
      out += this.fail(`a malformed event stream frame (${(error as Error).message})`);
    }
    return out;
  }

  /**
   * The whole frames the chunk completes. A frame starts with its total length (a 32-bit
   * big-endian integer), which is all that is read here.
   */
  private frames(chunk: Buffer): Buffer[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: Buffer[] = [];
    while (this.pending.length >= 4) {
      const length = this.pending.readUInt32BE(0);
      if (length < 16) throw new Error(`a frame of ${length} bytes`);
      if (this.pending.length < length) break;
      frames.push(this.pending.subarray(0, length));
      this.pending = this.pending.subarray(length);
    }
    return frames;
  }

  end(): string {
    if (this.failure || this.done) return '';
    return this.fail(
      this.stopped
        ? 'the upstream stream ended before its usage metadata'
        : 'the upstream stream ended before messageStop',
    );
  }

  private fail(reason: string): string {
    this.failure = reason;
    return errorEvent(`The upstream stream was interrupted: ${reason}`, 'stream_interrupted');
  }

  /** Once both the stop and the usage are in (in either order): the usage chunk and `[DONE]`. */
  private closing(): string {
    if (!this.stopped || !this.reported) return '';
    this.done = true;
    const usage =
      this.context.includeUsage && this.usage
        ? dataEvent({
            id: this.id,
            object: 'chat.completion.chunk',
            created: this.context.created,
            model: this.context.model,
            choices: [],
            usage: openAIUsage(this.usage),
          })
        : '';
    return usage + DONE_EVENT;
  }

  private chunk(delta: Record<string, unknown>, finish: string | null = null): string {
    return dataEvent({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.context.created,
      model: this.context.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(this.context.includeUsage ? { usage: null } : {}),
    });
  }

  private translate(
    headers: Record<string, { type: string; value: unknown }>,
    body: Uint8Array,
  ): string {
    const kind = stringHeader(headers, ':message-type', 'event');
    let event: StreamEvent = {};
    try {
      event = JSON.parse(toUtf8(body) || '{}') as StreamEvent;
    } catch {
      // No JSON payload: the headers say what it is.
    }
    if (kind === 'exception')
      return this.fail(
        `${stringHeader(headers, ':exception-type', 'exception')}: ${event.message ?? 'the upstream reported an error'}`,
      );
    if (kind === 'error')
      return this.fail(
        `${stringHeader(headers, ':error-code', 'error')}: ${stringHeader(headers, ':error-message', 'the upstream reported an error')}`,
      );
    let out = '';
    if (!this.started) {
      this.started = true;
      out += this.chunk({ role: 'assistant', content: '' });
    }
    switch (headers[':event-type']?.value) {
      case 'contentBlockStart': {
        const tool = event.start?.toolUse;
        if (!tool) return out;
        const index = this.toolIndexes.size;
        this.toolIndexes.set(event.contentBlockIndex ?? index, index);
        return (
          out +
          this.chunk({
            tool_calls: [
              {
                index,
                id: tool.toolUseId ?? `call_${index}`,
                type: 'function',
                function: { name: tool.name ?? '', arguments: '' },
              },
            ],
          })
        );
      }
      case 'contentBlockDelta': {
        if (typeof event.delta?.text === 'string' && event.delta.text !== '')
          return out + this.chunk({ content: event.delta.text });
        const input = event.delta?.toolUse?.input;
        const index = this.toolIndexes.get(event.contentBlockIndex ?? -1);
        if (typeof input === 'string' && input !== '' && index !== undefined)
          return out + this.chunk({ tool_calls: [{ index, function: { arguments: input } }] });
        return out;
      }
      case 'messageStop':
        this.stopped = true;
        return out + this.chunk({}, finishReason(event.stopReason)) + this.closing();
      case 'metadata':
        if (event.usage) this.usage = usageOf(event.usage);
        this.reported = true;
        return out + this.closing();
      default:
        // messageStart (the role chunk is sent above), contentBlockStop, reasoning.
        return out;
    }
  }
}

/** AWS names its errors in the `x-amzn-errortype` header; the body has only the message. */
const ERRORS_BY_STATUS: Record<number, { code: string; type: string }> = {
  400: { code: 'ValidationException', type: 'invalid_request_error' },
  403: { code: 'AccessDeniedException', type: 'permission_error' },
  404: { code: 'ResourceNotFoundException', type: 'invalid_request_error' },
  408: { code: 'ModelTimeoutException', type: 'server_error' },
  424: { code: 'ModelErrorException', type: 'server_error' },
  429: { code: 'ThrottlingException', type: 'rate_limit_error' },
  500: { code: 'InternalServerException', type: 'server_error' },
  503: { code: 'ServiceUnavailableException', type: 'server_error' },
};

/** Bedrock's `{message}` (or `{Message}`) as OpenAI's error, the AWS error name as the code. */
export function bedrockError(status: number, body: Buffer): TranslatedError {
  const known = ERRORS_BY_STATUS[status] ?? {
    code: `http_${status}`,
    type: status >= 500 ? 'server_error' : 'invalid_request_error',
  };
  let message = `The upstream answered ${status}.`;
  let code = known.code;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    const text = parsed.message ?? parsed.Message;
    if (typeof text === 'string') message = text;
    // Some AWS front ends name the error in the body too (`__type`: `…#ThrottlingException`).
    if (typeof parsed.__type === 'string') code = parsed.__type.split('#').at(-1) ?? code;
  } catch {
    // Not JSON: keep the status-based message.
  }
  return { body: openAIErrorBody(message, known.type, code), message };
}
