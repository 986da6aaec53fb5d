import { Injectable, Logger } from '@nestjs/common';
import { GatewayError } from '@switchyard/contracts';
import { Registry, TalliedCounter } from '@switchyard/observability';
import { AccountLimiter, hasLimits, type AccountLimits } from '@switchyard/limiter';
import { type Candidate, type RoutingTable } from '@switchyard/routing';
import { type Attempt } from './exchange.js';

// The pick step: the first candidate, in the policy's order, whose account has room.
// Accounts without limits need no Redis round trip, nor do limited ones whose allowance on
// this edge covers the request; the others are checked in batches
// (docs/architecture.md, "Account limits").

/** Candidates with limits are checked in Redis in batches of this size. */
const LIMIT_BATCH = 8;

export interface PickRequest {
  requestId: string;
  model: string;
  group: string;
  estimatedTokens: number;
  /** The token's own request rate, checked once per request (on its first pick). */
  tokenRate: { id: number; rateLimit: number } | undefined;
}

/** What this request already tried or found full: it is not offered again. */
export interface Exclusions {
  channels: Set<number>;
  keys: Set<number>;
}

@Injectable()
export class ChannelPicker {
  private readonly logger = new Logger('Proxy');

  private readonly admissions: TalliedCounter<'path'>;

  constructor(
    private readonly limiter: AccountLimiter,
    registry: Registry,
  ) {
    this.admissions = new TalliedCounter({
      name: 'edge_limit_admissions_total',
      help: 'Requests admitted under account or token limits, by whether Redis was asked (redis) or the edge allowance covered them (local).',
      labelNames: ['path'],
      registers: [registry],
    });
  }

  /** The next candidate with room, or null when none is left. */
  async pick(
    table: RoutingTable,
    request: PickRequest,
    excluded: Exclusions,
  ): Promise<Attempt | null> {
    const candidates = table.candidates({
      model: request.model,
      group: request.group,
      now: Date.now(),
      excludedChannels: excluded.channels,
      excludedKeys: excluded.keys,
    });
    let tokenChecked = request.tokenRate === undefined;
    for (;;) {
      const batch: Candidate[] = [];
      for (const candidate of candidates) {
        batch.push(candidate);
        if (!hasLimits(limitsOf(candidate)) || batch.length >= LIMIT_BATCH) break;
      }
      if (batch.length === 0 && tokenChecked) return null;
      const first = batch[0];
      if (first && tokenChecked && !hasLimits(limitsOf(first))) return unlimited(first);
      const result = await this.limiter
        .acquire({
          requestId: request.requestId,
          estimatedTokens: request.estimatedTokens,
          token: tokenChecked ? undefined : request.tokenRate,
          accounts: batch.map(limitsOf),
        })
        .catch((error: unknown) => {
          // Limits cannot be checked without Redis: serve rather than refuse (fail open).
          this.logger.warn({
            message: `account limits unchecked: ${(error as Error).message}`,
            requestId: request.requestId,
          });
          return null;
        });
      tokenChecked = true;
      if (result === null) return first ? unlimited(first) : null;
      if (result.kind === 'token_rate_limited') {
        const limit = request.tokenRate?.rateLimit ?? 0;
        throw new GatewayError(
          'rate_limit_exceeded',
          `Rate limit reached for this token (${limit} requests per minute). Retry in ${Math.ceil(result.retryAfterMs / 1000)} s.`,
          null,
          {
            retryAfterMs: result.retryAfterMs,
            rateLimit: { limitRequests: limit, remainingRequests: 0, resetMs: result.retryAfterMs },
          },
        );
      }
      if (result.kind === 'acquired') {
        this.admissions.tally({ path: result.roundTrip ? 'redis' : 'local' }).inc();
        return { candidate: batch[result.index]!, lease: result.lease };
      }
      if (batch.length === 0) return null;
      // Every account of this batch is full: they stay out for the rest of this request.
      for (const candidate of batch) excluded.keys.add(candidate.key.id);
    }
  }
}

function unlimited(candidate: Candidate): Attempt {
  return { candidate, lease: AccountLimiter.unlimited(candidate.key.id) };
}

function limitsOf(candidate: Candidate): AccountLimits {
  return {
    keyId: candidate.key.id,
    rpm: candidate.key.rpm,
    tpm: candidate.key.tpm,
    concurrency: candidate.key.concurrency,
  };
}
