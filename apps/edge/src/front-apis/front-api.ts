import { type IncomingHttpHeaders } from 'node:http';
import { type Type } from '@nestjs/common';
import {
  type ProviderSettings,
  type GatewayEndpoint,
  type GatewayError,
  type RoutedChannel,
} from '@switchyard/contracts';
import { type JsonSummary } from '../proxy/json-summary.js';
import { type Answer } from '../proxy/upstream-answer.js';

// A front API is one API the edge offers its callers (OpenAI's chat completions, Anthropic's
// Messages, ...): everything that depends on which one a request came in by is one module
// in a folder of its own, registered in registry.ts
// (docs/architecture.md, "Adding a front API"). The hot path (proxy/) asks these hooks and
// never which API it serves.

/** A route of a front API, as the HTTP server matches it. */
export interface FrontRoute {
  /** DELETE only for a served API (a stored Response's). */
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** A body limit of its own, in bytes (an audio upload's); `MAX_BODY_BYTES` otherwise. */
  bodyLimit?: number;
}

/**
 * Where a request was sent: its URL, the route's path parameters and the query. An API
 * that takes its model from the path (Gemini's) or its key from the query reads them here.
 */
export interface RequestLine {
  readonly url: string;
  readonly params: unknown;
  readonly query: unknown;
  readonly headers: IncomingHttpHeaders;
}

/** What the edge needs to know of a request body, checked just enough to route and meter it. */
export interface ParsedBody {
  json: Record<string, unknown>;
  /** The bytes as sent: forwarded unchanged unless the channel renames the model. */
  raw: Buffer;
  model: string;
  stream: boolean;
  /** Tokens the request may use: prompt estimate plus its completion budget. */
  estimatedTokens: number;
  /**
   * The most output the request may be billed for, for its spend hold (quota/spend-holds.ts):
   * its output limit, or a default when it sets none. Null: the request costs nothing.
   */
  worstCaseOutputTokens: number | null;
  /**
   * The most input the request may be billed for, for its spend hold, when it is not the
   * body's size in bytes (a token is at least a byte of text): a rerank's search units, a
   * speech's characters, a transcription's seconds.
   */
  worstCaseInputTokens?: number;
  /**
   * The prompt as text, for the tokenizer when the upstream reports no usage: for the chat
   * APIs, all a model reads of it (libs/providers' input-texts.ts).
   */
  promptText(): string;
}

/** One channel as an attempt sees it. */
export interface ChannelTarget {
  channel: RoutedChannel;
  upstreamModel: string;
  /** The channel's upstream key. */
  secret: string;
  settings: ProviderSettings;
  /** The client's headers (Anthropic's `anthropic-beta` goes on to anthropic channels). */
  clientHeaders: IncomingHttpHeaders;
}

/** The request an upstream is sent, in its own format. */
export interface UpstreamRequest {
  path: string;
  /** True when `path` is a provider's own route, complete under the base URL (no `/v1` added). */
  providerPath: boolean;
  /** A provider's own authentication headers; absent: `Authorization: Bearer` with the key. */
  headers?: Record<string, string>;
  sign?(url: URL): Promise<Record<string, string>>;
  body: Buffer;
}

/** How one channel is asked, and how its answer comes back to the caller: one attempt. */
export interface ChannelCall {
  request: UpstreamRequest;
  /**
   * A converted provider's error body says what its status may not (docs/providers.md): the
   * status the router judges, from both. Null: the status is judged as it is.
   */
  healthStatus: ((status: number, body: Buffer) => number) | null;
  /**
   * The upstream's answer in the caller's API: converted, or passed through and read for its
   * usage (`summary`, a stream's `translator`). A stream's first chunk is converted now, so a
   * provider error in its first event still fails over.
   */
  answer(status: number, answer: Answer): Answer;
}

/** An attempt the edge answers itself, without asking the channel (nor judging it). */
export interface EdgeAnswer {
  local(): Promise<Answer>;
}

/** An error as the callers of an API read it. */
export interface ErrorReply {
  body: Buffer | object;
  /** Set when it is not the default JSON type. */
  contentType?: string;
}

interface FrontApiBase {
  /** The name the table and the docs know it by. */
  name: string;
  routes: readonly FrontRoute[];
  /**
   * A failure in this API's error shape, for any of its routes (errors/). The headers tell
   * an API that two families of SDK call (the model list) which one is asking.
   */
  errorReply(error: GatewayError, headers: IncomingHttpHeaders): ErrorReply;
  /** A header that carries the request id besides `x-request-id` (Anthropic's `request-id`). */
  requestIdHeader?: string;
  /**
   * URLs whose failures this API shapes although no route of its matches them by prefix
   * (Gemini's `/v1/models/{model}:{method}`, beside OpenAI's `/v1/models`); a URL path.
   */
  claims?(path: string): boolean;
}

/** An API whose requests are forwarded to a channel, failed over, relayed and metered. */
export interface ForwardedFrontApi extends FrontApiBase {
  kind: 'forwarded';
  /** The endpoint usage records name (libs/contracts). */
  endpoint: GatewayEndpoint;
  /** The caller's token, as `Authorization` carries it (`Bearer ...`). */
  credential(headers: IncomingHttpHeaders, line?: RequestLine): string | undefined;
  /**
   * The request body checked (400s in this API's words) and read. The proxy always gives
   * the request line; only an API that reads it needs it (the model in Gemini's path, a
   * multipart upload's boundary in its headers).
   */
  parse(raw: unknown, line?: RequestLine): ParsedBody;
  /**
   * The request for one channel, and how its answer comes back; or the edge's own answer.
   * Throws a GatewayError when the channel cannot serve the request (it is then passed over).
   */
  call(body: ParsedBody, target: ChannelTarget): ChannelCall | EdgeAnswer;
  /**
   * The body asking for another model, for a fallback (docs/routing.md, "Fallbacks across
   * models"). Absent: this API's requests do not fall back (the model is in the URL, or in a
   * multipart form).
   */
  renamed?(body: ParsedBody, model: string): ParsedBody;
  /** The event that ends a stream the upstream broke off, as this API's SDKs read it. */
  interruption(reason: string): string;
  /**
   * The API answers audio files (speech): an upstream's `audio/*` answer is streamed to the
   * client as bytes as they come. Elsewhere a success that is not JSON or events fails over.
   */
  answersAudio?: boolean;
  /** Images a successful answer returned, when metering prices them (images only). */
  imagesOf?(summary: JsonSummary): number;
}

/** An API the edge answers from its own state, with a Nest controller. */
export interface ServedFrontApi extends FrontApiBase {
  kind: 'served';
  controller: Type;
}

export type FrontApi = ForwardedFrontApi | ServedFrontApi;
