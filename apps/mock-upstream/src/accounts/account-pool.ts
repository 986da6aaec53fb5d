import { Injectable } from '@nestjs/common';

// The provider's pool of accounts. Each key is one account with its own limits, counted
// over a sliding minute like real providers do, and its own statistics, which tests read
// to prove that the gateway kept within the limits.

const WINDOW_MS = 60_000;

export interface AccountSpec {
  key: string;
  /** Requests per minute; 0 = no limit. */
  rpm: number;
  /** Tokens per minute; 0 = no limit. */
  tpm: number;
  /** Requests at once; 0 = no limit. */
  concurrency: number;
  banned: boolean;
}

export interface AccountStats {
  key: string;
  requests: number;
  served: number;
  rateLimited: number;
  failed: number;
  inFlight: number;
  maxInFlight: number;
  /** The most requests this account accepted within any sliding minute. */
  maxRequestsPerWindow: number;
  tokens: number;
}

class Account {
  private readonly accepted: number[] = [];
  private readonly tokenLog: { at: number; tokens: number }[] = [];
  readonly stats: AccountStats;

  constructor(readonly spec: AccountSpec) {
    this.stats = {
      key: spec.key,
      requests: 0,
      served: 0,
      rateLimited: 0,
      failed: 0,
      inFlight: 0,
      maxInFlight: 0,
      maxRequestsPerWindow: 0,
      tokens: 0,
    };
  }

  private prune(now: number): void {
    while (this.accepted.length > 0 && this.accepted[0]! <= now - WINDOW_MS) this.accepted.shift();
    while (this.tokenLog.length > 0 && this.tokenLog[0]!.at <= now - WINDOW_MS)
      this.tokenLog.shift();
  }

  private tokensInWindow(): number {
    return this.tokenLog.reduce((sum, entry) => sum + entry.tokens, 0);
  }

  /** Which limit refuses a request now, if any. */
  refusal(now: number, promptTokens: number): 'requests' | 'tokens' | 'concurrency' | null {
    this.prune(now);
    if (this.spec.rpm > 0 && this.accepted.length >= this.spec.rpm) return 'requests';
    if (this.spec.tpm > 0 && this.tokensInWindow() + promptTokens > this.spec.tpm) return 'tokens';
    if (this.spec.concurrency > 0 && this.stats.inFlight >= this.spec.concurrency)
      return 'concurrency';
    return null;
  }

  /** Seconds until the oldest request leaves the window. */
  retryAfterSeconds(now: number): number {
    const oldest = this.accepted[0] ?? this.tokenLog[0]?.at ?? now;
    return Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000));
  }

  accept(now: number, promptTokens: number): void {
    this.accepted.push(now);
    this.tokenLog.push({ at: now, tokens: promptTokens });
    this.stats.inFlight += 1;
    this.stats.maxInFlight = Math.max(this.stats.maxInFlight, this.stats.inFlight);
    this.stats.maxRequestsPerWindow = Math.max(
      this.stats.maxRequestsPerWindow,
      this.accepted.length,
    );
  }

  finish(completionTokens: number, outcome: 'served' | 'failed', promptTokens: number): void {
    this.stats.inFlight -= 1;
    this.stats[outcome] += 1;
    this.stats.tokens += promptTokens + completionTokens;
    this.tokenLog.push({ at: Date.now(), tokens: completionTokens });
  }
}

export type Admission =
  | { kind: 'unknown' }
  | { kind: 'banned' }
  | {
      kind: 'limited';
      limit: 'requests' | 'tokens' | 'concurrency';
      retryAfterSeconds: number;
      spec: AccountSpec;
    }
  | { kind: 'admitted'; lease: AccountLease };

/** An admitted request; `finish` must be called once, however the request ends. */
export interface AccountLease {
  key: string;
  finish(outcome: 'served' | 'failed', completionTokens: number): void;
}

@Injectable()
export class AccountPool {
  private readonly accounts = new Map<string, Account>();

  constructor(specs: AccountSpec[]) {
    for (const spec of specs) this.upsert(spec);
  }

  upsert(spec: AccountSpec): void {
    this.accounts.set(spec.key, new Account(spec));
  }

  reset(specs: AccountSpec[]): void {
    this.accounts.clear();
    for (const spec of specs) this.upsert(spec);
  }

  list(): AccountSpec[] {
    return [...this.accounts.values()].map((a) => a.spec);
  }

  stats(): AccountStats[] {
    return [...this.accounts.values()].map((a) => ({ ...a.stats }));
  }

  admit(key: string | undefined, promptTokens: number, now = Date.now()): Admission {
    const account = key === undefined ? undefined : this.accounts.get(key);
    if (!account) return { kind: 'unknown' };
    account.stats.requests += 1;
    if (account.spec.banned) return { kind: 'banned' };
    const limit = account.refusal(now, promptTokens);
    if (limit) {
      account.stats.rateLimited += 1;
      return {
        kind: 'limited',
        limit,
        retryAfterSeconds: account.retryAfterSeconds(now),
        spec: account.spec,
      };
    }
    account.accept(now, promptTokens);
    let finished = false;
    return {
      kind: 'admitted',
      lease: {
        key: account.spec.key,
        finish: (outcome, completionTokens) => {
          if (finished) return;
          finished = true;
          account.finish(completionTokens, outcome, promptTokens);
        },
      },
    };
  }
}

/** `key[:rpm[:tpm[:banned]]]` as in MOCK_ACCOUNTS. */
export function parseAccountSpec(text: string): AccountSpec {
  const [key = '', rpm = '0', tpm = '0', banned] = text.split(':');
  return { key, rpm: Number(rpm), tpm: Number(tpm), concurrency: 0, banned: banned === 'banned' };
}
