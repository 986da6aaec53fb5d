import type { ProviderSettings, ReportedUsage } from '@switchyard/contracts';

// What every provider adapter offers the edge: pure functions from OpenAI's chat-completion
// format to the provider's wire format and back, and a stream translator that turns the
// provider's event stream into OpenAI's chunks as the bytes arrive (docs/providers.md).

/** One request to a provider, ready to send. */
export interface OutboundRequest {
  /** The path (with its query) under the channel's base URL. */
  path: string;
  /** Authentication and provider headers; content-type is the caller's, accept too unless named. */
  headers: Record<string, string>;
  body: Buffer;
  /**
   * Providers that sign each request (AWS Signature V4): the signature headers for the URL
   * the request goes to, made just before it is sent since they hold the time.
   */
  sign?(url: URL): Promise<Record<string, string>>;
}

/** The headers to send with a request: its own and, when it is signed, its signature. */
export async function outboundHeaders(
  request: OutboundRequest,
  url: URL,
): Promise<Record<string, string>> {
  return request.sign ? { ...request.headers, ...(await request.sign(url)) } : request.headers;
}

export interface ChatRequestInput {
  /** The client's OpenAI body (chat completion or embeddings), already checked by the edge. */
  body: Record<string, unknown>;
  upstreamModel: string;
  /** The channel's key as sealed in the routing snapshot, opened. */
  secret: string;
  settings: ProviderSettings;
}

/** What the translated answer needs to look like OpenAI's. */
export interface AnswerContext {
  /** Model name to report when the provider's answer names none. */
  model: string;
  /** The client asked for `stream_options.include_usage`. */
  includeUsage: boolean;
  /** Seconds since the epoch, for `created`. */
  created: number;
  /** Embeddings: the client asked for `encoding_format: base64`. */
  base64?: boolean;
  /**
   * The prompt's tokens as the edge estimates them, for a converted stream that must say
   * them before the upstream counts (Anthropic's `message_start`).
   */
  inputTokensEstimate?: number;
}

export interface TranslatedAnswer {
  body: Buffer;
  usage: ReportedUsage | null;
  model: string;
  completionText: string;
}

/** A provider's error answer in OpenAI's error shape. */
export interface TranslatedError {
  body: Buffer;
  message: string;
}

/** Provider event stream in, OpenAI `data:` events out; one per upstream stream. */
export interface StreamTranslator {
  /** Upstream bytes in; the OpenAI events they complete (often none). */
  push(chunk: Buffer): string;
  /** The upstream ended: the events still owed (the usage chunk, `[DONE]`). */
  end(): string;
  /** Usage as the provider reported it, once known. */
  readonly usage: ReportedUsage | null;
  /** Set when the provider reported an error mid-stream or the stream ended early. */
  readonly failure: string | null;
  /**
   * The event that ends this stream when its connection breaks, in the stream's own format
   * (a Responses stream numbers its events); absent where the edge's default fits.
   */
  interrupt?(reason: string): string;
  /**
   * The media type of what it writes, where that is not the upstream's: a Gemini stream
   * without `alt=sse` is one JSON array, whatever the upstream streamed.
   */
  readonly contentType?: string;
}

/** Embeddings for a provider that has them: OpenAI's request in, OpenAI's list out. */
export interface EmbeddingsAdapter {
  request(input: ChatRequestInput): OutboundRequest;
  /** The provider's answer as OpenAI's embeddings list, in the encoding the client asked for. */
  answer(body: Buffer, context: AnswerContext): Buffer;
}

export interface ChatAdapter {
  chatRequest(input: ChatRequestInput, stream: boolean): OutboundRequest;
  chatAnswer(body: Buffer, context: AnswerContext): TranslatedAnswer;
  chatStream(context: AnswerContext): StreamTranslator;
  error(status: number, body: Buffer): TranslatedError;
  /**
   * The HTTP status as the router's health rules should read it, given the error body
   * (some providers say in the body what the status does not).
   */
  healthStatus(status: number, body: Buffer): number;
  /** Absent when the provider has no embeddings endpoint (a 400 at the edge). */
  readonly embeddings?: EmbeddingsAdapter;
}
