import { type IncomingMessage, type ServerResponse } from 'node:http';
import { type OutcomeKind, type ReportedUsage } from '@switchyard/contracts';
import { type AccountLease } from '@switchyard/limiter';
import { type CarvedHold } from '@switchyard/spend';
import { type Candidate } from '@switchyard/routing';
import { type GatewayToken } from '../auth/token-directory.js';
import {
  type ForwardedFrontApi,
  type ParsedBody,
  type RequestLine,
} from '../front-apis/front-api.js';
import { type ByteSample } from '../request-log/body-sample.js';

// The state one client request carries through the hot path's steps (docs/architecture.md):
// authenticate, pick, forward, fail over, relay, meter.

/** A client's request as the front door read it (front-door.ts). */
export interface ClientRequest extends RequestLine {
  /** The edge's own id for it (`x-request-id`), which its usage record is keyed by. */
  readonly id: string;
  readonly method: string;
  /** The client's address, behind the trusted proxies. */
  readonly ip: string;
  /** The body's bytes as sent (none: empty). */
  readonly body: Buffer;
  readonly raw: IncomingMessage;
}

/** One client request as it goes through the edge. */
export interface Exchange {
  request: ClientRequest;
  /** Node's response: the relay writes the answer to it, headers and all. */
  response: ServerResponse;
  /** The front API the request came in by. */
  api: ForwardedFrontApi;
  token: GatewayToken;
  requestedAt: number;
  startedAt: number;
  /** Aborted when the client goes away; cancels the upstream call. */
  abort: AbortController;
  /** Null until the body has been read and checked. */
  body: ParsedBody | null;
  /**
   * The model the caller asked for, once a fallback model's body replaced its own
   * (proxy/model-fallback.ts); `body.model` is then the fallback's.
   */
  requestedModel?: string;
  attempts: number;
  /** The token's own request rate has counted this request (once, whatever it tries). */
  rateCounted?: boolean;
  candidate: Candidate | null;
  /** The spend accounts holding this request's worst case, once held (quota/spend-holds.ts). */
  holds?: string[];
  /** When the holds were carved from this edge's block of holds: which, and how much. */
  carved?: CarvedHold;
  /** The worst case the holds were asked for, in micro-dollars, before any price group. */
  heldWorstCase?: number;
}

/** An exchange whose body is known: what routing and forwarding work on. */
export type RoutedExchange = Exchange & { body: ParsedBody };

/** A candidate picked for one attempt, with the room it holds on its account. */
export interface Attempt {
  candidate: Candidate;
  lease: AccountLease;
}

export interface AttemptFailure {
  kind: OutcomeKind;
  message: string;
}

/** What the client was given, as metering needs it. */
export interface Delivery {
  status: number;
  errorCode: string | null;
  usage: ReportedUsage | null;
  upstreamModel: string | null;
  completionText: string;
  firstByteMs: number | null;
  /** Images an image generation returned (metering prices them when no usage came). */
  images?: number;
  /**
   * What the client was sent, kept only for a token with the request log on: the whole
   * answer, or a bounded sample of a stream (request-log/).
   */
  responseSample?: Buffer | string | ByteSample;
}
