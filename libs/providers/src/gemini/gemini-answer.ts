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
import { toolCallId } from './gemini-tool-calls.js';

// Gemini `generateContent` answers → OpenAI chat completions: the JSON answer, the
// `streamGenerateContent?alt=sse` stream (https://ai.google.dev/api/generate-content) and
// errors (https://ai.google.dev/gemini-api/docs/troubleshooting).

export interface GeminiUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { id?: string; name?: string; args?: unknown };
}

interface GeminiResponse {
  candidates?: {
    content?: { parts?: GeminiPart[] };
    finishReason?: string;
  }[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsage;
  modelVersion?: string;
  responseId?: string;
  error?: GeminiErrorDetail;
}

interface GeminiErrorDetail {
  code?: number;
  message?: string;
  status?: string;
}

const FINISH_REASONS: Record<string, string> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
};

/** Gemini ends a turn with function calls as STOP; OpenAI says `tool_calls`. */
export function finishReason(reason: string | undefined, calledTools: boolean): string {
  const mapped = FINISH_REASONS[reason ?? ''] ?? 'stop';
  return calledTools && mapped === 'stop' ? 'tool_calls' : mapped;
}

/**
 * Gemini's `promptTokenCount` already holds the cached part; thinking is billed as output
 * but counted apart (`thoughtsTokenCount`), and tool-use prompts apart from the prompt.
 */
export function usageOf(usage: GeminiUsage): ReportedUsage {
  return {
    promptTokens: (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0),
    completionTokens: (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0),
    cachedTokens: usage.cachedContentTokenCount ?? 0,
  };
}

function completionId(responseId: string | undefined): string {
  return `chatcmpl-${responseId ?? Date.now().toString(36)}`;
}

interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** Gemini's calls carry no id unless the model gives one: numbered within the answer. */
function toolCallOf(part: GeminiPart, responseId: string, index: number): ToolCall {
  const call = part.functionCall!;
  return {
    id: toolCallId(call.id ?? `call_${responseId}_${index}`, part.thoughtSignature),
    type: 'function',
    function: { name: call.name ?? '', arguments: JSON.stringify(call.args ?? {}) },
  };
}

/** Thought summaries are not the answer. */
function answerParts(response: GeminiResponse): GeminiPart[] {
  return (response.candidates?.[0]?.content?.parts ?? []).filter((part) => part.thought !== true);
}

export function geminiAnswer(body: Buffer, context: AnswerContext): TranslatedAnswer {
  const response = JSON.parse(body.toString('utf8')) as GeminiResponse;
  const responseId = response.responseId ?? Date.now().toString(36);
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const part of answerParts(response)) {
    if (typeof part.text === 'string') text += part.text;
    if (part.functionCall) toolCalls.push(toolCallOf(part, responseId, toolCalls.length));
  }
  const candidate = response.candidates?.[0];
  // A blocked prompt gets no candidate at all, only the reason.
  const finish = candidate
    ? finishReason(candidate.finishReason, toolCalls.length > 0)
    : 'content_filter';
  const usage = response.usageMetadata ? usageOf(response.usageMetadata) : null;
  const model = response.modelVersion ?? context.model;
  const completion = {
    id: completionId(response.responseId),
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
        finish_reason: finish,
      },
    ],
    ...(usage
      ? { usage: openAIUsage(usage, response.usageMetadata?.thoughtsTokenCount ?? 0) }
      : {}),
  };
  const completionText = text + toolCalls.map((call) => JSON.stringify(call.function)).join('');
  return { body: Buffer.from(JSON.stringify(completion)), usage, model, completionText };
}

/**
 * Translates one Gemini SSE stream. Every event is a whole `GenerateContentResponse`:
 * text arrives in pieces, each function call whole, the finish reason and the final usage
 * in the last event. Gemini sends no end marker: a stream that closes without a finish
 * reason was cut.
 */
export class GeminiStreamTranslator implements StreamTranslator {
  private readonly decoder = new EventStreamDecoder();
  private id = completionId(undefined);
  private responseId = Date.now().toString(36);
  private model: string;
  private started = false;
  private toolCalls = 0;
  private finishReason: string | undefined;
  private reported: GeminiUsage | undefined;
  usage: ReportedUsage | null = null;
  failure: string | null = null;

  constructor(private readonly context: AnswerContext) {
    this.model = context.model;
  }

  push(chunk: Buffer): string {
    let out = '';
    for (const event of this.decoder.feedJson<GeminiResponse>(chunk)) {
      if (this.failure) break;
      out += this.translate(event);
    }
    return out;
  }

  end(): string {
    if (this.failure) return '';
    if (this.finishReason === undefined) {
      this.failure = 'the upstream stream ended before a finish reason';
      return errorEvent(
        `The upstream stream was interrupted: ${this.failure}`,
        'stream_interrupted',
      );
    }
    if (this.reported) this.usage = usageOf(this.reported);
    let out = this.chunk({}, finishReason(this.finishReason, this.toolCalls > 0));
    if (this.context.includeUsage && this.usage) {
      out += dataEvent({
        id: this.id,
        object: 'chat.completion.chunk',
        created: this.context.created,
        model: this.model,
        choices: [],
        usage: openAIUsage(this.usage, this.reported?.thoughtsTokenCount ?? 0),
      });
    }
    return out + DONE_EVENT;
  }

  private chunk(delta: Record<string, unknown>, finish: string | null = null): string {
    return dataEvent({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.context.created,
      model: this.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(this.context.includeUsage ? { usage: null } : {}),
    });
  }

  private translate(response: GeminiResponse): string {
    if (response.error) {
      const { status, message } = response.error;
      this.failure = `${status ?? 'error'}: ${message ?? 'the upstream reported an error'}`;
      return errorEvent(
        `The upstream stream was interrupted: ${this.failure}`,
        'stream_interrupted',
      );
    }
    let out = '';
    if (!this.started) {
      this.started = true;
      if (response.responseId) {
        this.responseId = response.responseId;
        this.id = completionId(response.responseId);
      }
      if (response.modelVersion) this.model = response.modelVersion;
      out += this.chunk({ role: 'assistant', content: '' });
    }
    for (const part of answerParts(response)) {
      if (typeof part.text === 'string' && part.text !== '')
        out += this.chunk({ content: part.text });
      if (part.functionCall) {
        const index = this.toolCalls++;
        const { id, type, function: fn } = toolCallOf(part, this.responseId, index);
        out += this.chunk({ tool_calls: [{ index, id, type, function: fn }] });
      }
    }
    // Usage is cumulative: the last report is the answer's.
    if (response.usageMetadata) this.reported = response.usageMetadata;
    const candidate = response.candidates?.[0];
    if (candidate?.finishReason) this.finishReason = candidate.finishReason;
    else if (!candidate && response.promptFeedback?.blockReason) this.finishReason = 'SAFETY';
    return out;
  }
}

const ERROR_TYPES: Record<string, string> = {
  INVALID_ARGUMENT: 'invalid_request_error',
  FAILED_PRECONDITION: 'invalid_request_error',
  NOT_FOUND: 'invalid_request_error',
  UNAUTHENTICATED: 'authentication_error',
  PERMISSION_DENIED: 'permission_error',
  RESOURCE_EXHAUSTED: 'rate_limit_error',
  INTERNAL: 'server_error',
  UNAVAILABLE: 'server_error',
  DEADLINE_EXCEEDED: 'server_error',
};

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Google's `{error: {code, message, status}}` as OpenAI's error, its status as the code. */
export function geminiError(status: number, body: Buffer): TranslatedError {
  let name = STATUS_NAMES[status] ?? 'UNKNOWN';
  let message = `The upstream answered ${status}.`;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as
      { error?: GeminiErrorDetail } | { error?: GeminiErrorDetail }[];
    // Some Google front ends wrap the error in an array.
    const error = Array.isArray(parsed) ? parsed[0]?.error : parsed.error;
    if (typeof error?.status === 'string') name = error.status;
    if (typeof error?.message === 'string') message = error.message;
  } catch {
    // Not JSON (a proxy's HTML page): keep the status-based message.
  }
  const type = ERROR_TYPES[name] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
  return { body: openAIErrorBody(message, type, name.toLowerCase()), message };
}
