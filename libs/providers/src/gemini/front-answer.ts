import type { ReportedUsage } from '@switchyard/contracts';
import type { AnswerContext, StreamTranslator, TranslatedAnswer } from '../adapter.js';
import { ChatChunkDecoder, EventStreamDecoder, type ChatStreamChunk } from '../sse.js';
import { type OpenAIUsage } from '../openai-usage.js';
import { geminiAnswer, usageOf, type GeminiUsage } from './gemini-answer.js';

// Gemini's API in front of the gateway (docs/providers.md, "Gemini's API in front"): OpenAI's
// answers, streams and errors as Gemini's `GenerateContentResponse`
// (https://ai.google.dev/api/generate-content#generatecontentresponse), its stream (server-
// sent events with `alt=sse`, else one JSON array written as it grows) and Google's error
// shape (https://ai.google.dev/gemini-api/docs/troubleshooting). A `gemini` channel's answer
// is Gemini's already: only its usage is read, and its stream framed as the client asked.

type Json = Record<string, unknown>;

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  402: 'PERMISSION_DENIED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  415: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  502: 'UNAVAILABLE',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** Google's canonical status name for an HTTP status. */
export function geminiStatusName(status: number): string {
  return STATUS_NAMES[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT');
}

function errorObject(status: number, message: string): Json {
  return { error: { code: status, message, status: geminiStatusName(status) } };
}

/** An error in Google's shape, which its SDKs raise by `code` and `status`. */
export function geminiErrorBody(status: number, message: string): Buffer {
  return Buffer.from(JSON.stringify(errorObject(status, message)));
}

/** An OpenAI-shaped error answer (an upstream's or an adapter's) in Google's shape. */
export function chatErrorToGeminiError(status: number, body: Buffer): Buffer {
  let message = `The upstream answered ${status}.`;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: { message?: unknown } };
    if (typeof parsed.error?.message === 'string') message = parsed.error.message;
  } catch {
    // Not JSON (a proxy's HTML page): keep the status-based message.
  }
  return geminiErrorBody(status, message);
}

/**
 * A `gemini` channel's error as its callers read it: Google's already, or (a proxy's page,
 * a relay's own JSON) put in Google's shape with what message it has.
 */
export function geminiUpstreamError(status: number, body: Buffer): Buffer {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as {
      error?: { code?: unknown; status?: unknown; message?: unknown };
    };
    const error = parsed.error;
    if (
      typeof error?.code === 'number' &&
      typeof error.status === 'string' &&
      typeof error.message === 'string'
    )
      return body;
  } catch {
    // Not JSON: given a message below.
  }
  return chatErrorToGeminiError(status, body);
}

/**
 * How a Gemini stream is written: `alt=sse` as server-sent events, else one JSON array,
 * each element written when it is known. Every write ends with a blank line, so the
 * edge's relay (which passes only whole events) passes each one as soon as it is written.
 */
export class GeminiFraming {
  private written = 0;

  constructor(readonly sse: boolean) {}

  get contentType(): string {
    return this.sse ? 'text/event-stream' : 'application/json';
  }

  item(response: unknown): string {
    const json = JSON.stringify(response);
    if (this.sse) return `data: ${json}\r\n\r\n`;
    return `${this.written++ === 0 ? '[' : ',\r\n'}${json}\n\n`;
  }

  end(): string {
    if (this.sse) return '';
    return `${this.written === 0 ? '[' : ''}]\n\n`;
  }

  /** The last element of a stream that failed: Google's error object. */
  error(status: number, message: string): string {
    return this.item(errorObject(status, message)) + this.end();
  }
}

const FINISH_REASONS: Record<string, string> = {
  stop: 'STOP',
  length: 'MAX_TOKENS',
  tool_calls: 'STOP',
  function_call: 'STOP',
  content_filter: 'SAFETY',
};

function finishReasonOf(reason: string | null | undefined): string {
  return FINISH_REASONS[reason ?? ''] ?? 'STOP';
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

/** Gemini's usage: the prompt holds its cached part, as OpenAI's does. */
export function usageMetadataOf(usage: ReportedUsage | null): Json {
  const prompt = usage?.promptTokens ?? 0;
  const candidates = usage?.completionTokens ?? 0;
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: candidates,
    totalTokenCount: prompt + candidates,
    ...(usage?.cachedTokens ? { cachedContentTokenCount: usage.cachedTokens } : {}),
  };
}

/** A tool call's arguments as the `args` object; arguments that are no JSON object, `{}`. */
function argsOf(args: unknown): Json {
  try {
    const parsed: unknown = JSON.parse(typeof args === 'string' && args !== '' ? args : '{}');
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Json)
      : {};
  } catch {
    return {};
  }
}

interface ToolCall {
  id?: string;
  function?: { name?: string; arguments?: string };
}

function functionCallPart(call: ToolCall): Json {
  return {
    functionCall: {
      ...(call.id ? { id: call.id } : {}),
      name: call.function?.name ?? '',
      args: argsOf(call.function?.arguments),
    },
  };
}

function responseId(completionId: unknown): string {
  const id = typeof completionId === 'string' ? completionId.replace(/^chatcmpl-/, '') : '';
  return id || Date.now().toString(36);
}

interface ChatCompletion {
  id?: string;
  model?: string;
  choices?: {
    message?: { content?: string | null; tool_calls?: ToolCall[] };
    finish_reason?: string | null;
  }[];
  usage?: OpenAIUsage;
}

/** OpenAI's chat completion as Gemini's answer; its usage read for metering. */
export function chatAnswerToGemini(body: Buffer, context: AnswerContext): TranslatedAnswer {
  const completion = JSON.parse(body.toString('utf8')) as ChatCompletion;
  const choice = completion.choices?.[0];
  const text = choice?.message?.content ?? '';
  const calls = choice?.message?.tool_calls ?? [];
  const parts: Json[] = [...(text !== '' ? [{ text }] : []), ...calls.map(functionCallPart)];
  const usage = reportedUsage(completion.usage);
  const model = completion.model ?? context.model;
  const response = {
    candidates: [
      {
        content: { role: 'model', parts },
        finishReason: finishReasonOf(choice?.finish_reason),
        index: 0,
      },
    ],
    usageMetadata: usageMetadataOf(usage),
    modelVersion: model,
    responseId: responseId(completion.id),
  };
  const completionText =
    text + calls.map((c) => (c.function?.name ?? '') + (c.function?.arguments ?? '')).join('');
  return { body: Buffer.from(JSON.stringify(response)), usage, model, completionText };
}

/**
 * OpenAI's chunks in, Gemini's stream out: each piece of text as a response of its own,
 * each function call whole (OpenAI sends its arguments in pieces) once the calls are
 * over, and a last response with the finish reason and the usage, written on `[DONE]`
 * since the usage chunk follows the finish.
 */
export class ChatToGeminiStream implements StreamTranslator {
  private readonly chunks = new ChatChunkDecoder<ChatStreamChunk>({
    finished: () => Boolean(this.failure || this.stopped),
    chunk: (chunk) => this.translate(chunk),
    done: () => this.stop(),
  });
  private readonly calls = new Map<number, { id?: string; name: string; arguments: string }>();
  private id = responseId(undefined);
  private model: string;
  private started = false;
  private stopped = false;
  private finish: string | null = null;
  usage: ReportedUsage | null = null;
  failure: string | null = null;

  constructor(
    context: AnswerContext,
    private readonly framing: GeminiFraming,
  ) {
    this.model = context.model;
  }

  get contentType(): string {
    return this.framing.contentType;
  }

  push(chunk: Buffer): string {
    return this.chunks.push(chunk);
  }

  end(): string {
    if (this.failure || this.stopped) return '';
    if (this.finish === null) {
      this.failure = 'the upstream stream ended before its finish reason';
      return this.interrupt(this.failure);
    }
    return this.stop();
  }

  interrupt(reason: string): string {
    return this.framing.error(500, `The upstream stream was interrupted: ${reason}`);
  }

  private response(parts: Json[], last: Json = {}): string {
    return this.framing.item({
      candidates: [{ content: { role: 'model', parts }, ...last, index: 0 }],
      ...(last.finishReason ? { usageMetadata: usageMetadataOf(this.usage) } : {}),
      modelVersion: this.model,
      responseId: this.id,
    });
  }

  private translate(chunk: ChatStreamChunk): string {
    if (chunk.error) {
      this.failure = chunk.error.message ?? 'the upstream reported an error';
      return this.interrupt(this.failure);
    }
    if (!this.started) {
      this.started = true;
      this.id = responseId(chunk.id);
      if (chunk.model) this.model = chunk.model;
    }
    const usage = reportedUsage(chunk.usage);
    if (usage) this.usage = usage;
    const choice = chunk.choices?.[0];
    let out = '';
    const text = choice?.delta?.content;
    if (typeof text === 'string' && text !== '') out += this.response([{ text }]);
    for (const call of choice?.delta?.tool_calls ?? []) {
      const index = call.index ?? 0;
      const known = this.calls.get(index) ?? { name: '', arguments: '' };
      if (call.id) known.id = call.id;
      if (call.function?.name) known.name += call.function.name;
      if (call.function?.arguments) known.arguments += call.function.arguments;
      this.calls.set(index, known);
    }
    if (choice?.finish_reason) this.finish = choice.finish_reason;
    return out;
  }

  private stop(): string {
    if (this.stopped) return '';
    this.stopped = true;
    const calls = [...this.calls.values()].map((c) =>
      functionCallPart({ id: c.id, function: { name: c.name, arguments: c.arguments } }),
    );
    return this.response(calls, { finishReason: finishReasonOf(this.finish) }) + this.framing.end();
  }
}

/** A `gemini` channel's answer relayed as it came, its usage read. */
export function geminiPassthroughUsage(body: Buffer, context: AnswerContext): TranslatedAnswer {
  return { ...geminiAnswer(body, context), body };
}

interface GeminiEvent {
  candidates?: { finishReason?: string }[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsage;
  error?: { code?: number; message?: string; status?: string };
}

/**
 * A `gemini` channel's stream (always asked for as server-sent events): each response
 * passed on as it came, framed as the client asked, its usage read as it passes.
 * Gemini sends no end marker: a stream that closes before a finish reason was cut.
 */
export class GeminiStreamRelay implements StreamTranslator {
  private readonly decoder = new EventStreamDecoder();
  private finished = false;
  private reported: GeminiUsage | undefined;
  usage: ReportedUsage | null = null;
  failure: string | null = null;

  constructor(private readonly framing: GeminiFraming) {}

  get contentType(): string {
    return this.framing.contentType;
  }

  push(chunk: Buffer): string {
    let out = '';
    for (const event of this.decoder.feedJson<GeminiEvent>(chunk)) {
      if (this.failure) break;
      out += this.pass(event);
    }
    return out;
  }

  end(): string {
    if (this.failure) return '';
    if (!this.finished) {
      this.failure = 'the upstream stream ended before a finish reason';
      return this.interrupt(this.failure);
    }
    if (this.reported) this.usage = usageOf(this.reported);
    return this.framing.end();
  }

  interrupt(reason: string): string {
    return this.framing.error(500, `The upstream stream was interrupted: ${reason}`);
  }

  private pass(event: GeminiEvent): string {
    if (event.error) {
      const { status, message } = event.error;
      this.failure = `${status ?? 'error'}: ${message ?? 'the upstream reported an error'}`;
      return this.framing.error(event.error.code ?? 500, message ?? this.failure);
    }
    const candidate = event.candidates?.[0];
    // Usage is cumulative: the last report is the answer's.
    if (event.usageMetadata) this.reported = event.usageMetadata;
    if (candidate?.finishReason || (!candidate && event.promptFeedback?.blockReason))
      this.finished = true;
    return this.framing.item(event);
  }
}

/**
 * OpenAI's embeddings list as `embedContent`'s answer (`embedding`) or
 * `batchEmbedContents`' (`embeddings`); its usage, when reported, read for metering.
 */
export function embeddingsToGemini(
  body: Buffer,
  batch: boolean,
): { body: Buffer; usage: ReportedUsage | null } {
  const list = JSON.parse(body.toString('utf8')) as {
    data?: { embedding?: unknown }[];
    usage?: { prompt_tokens?: number };
  };
  const values = (list.data ?? []).map(({ embedding }) => ({
    values: Array.isArray(embedding) ? embedding : [],
  }));
  const answer = batch ? { embeddings: values } : { embedding: values[0] ?? { values: [] } };
  const prompt = list.usage?.prompt_tokens;
  return {
    body: Buffer.from(JSON.stringify(answer)),
    usage: typeof prompt === 'number' ? { promptTokens: prompt, completionTokens: 0 } : null,
  };
}
