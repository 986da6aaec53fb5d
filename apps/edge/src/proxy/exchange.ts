import { type GatewayEndpoint, type OutcomeKind, type ReportedUsage } from '@switchyard/contracts';
import { type AccountLease } from '@switchyard/limiter';
import { type Candidate } from '@switchyard/routing';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { type GatewayToken } from '../auth/token-directory.js';
import { type ParsedBody } from './request-body.js';

// The state one client request carries through the hot path's steps (docs/architecture.md):
// authenticate, pick, forward, fail over, relay, meter.

/** One client request as it goes through the edge. */
export interface Exchange {
  request: FastifyRequest;
  reply: FastifyReply;
  endpoint: GatewayEndpoint;
  token: GatewayToken;
  requestedAt: number;
  startedAt: number;
  /** Aborted when the client goes away; cancels the upstream call. */
  abort: AbortController;
  /** Null until the body has been read and checked. */
  body: ParsedBody | null;
  attempts: number;
  candidate: Candidate | null;
  /** The spend accounts holding this request's worst case, once held (quota/spend-holds.ts). */
  holds?: string[];
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
}
