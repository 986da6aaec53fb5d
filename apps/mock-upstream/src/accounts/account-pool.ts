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
  /**
   * Its refusals quote the whole key it was sent, as some providers' do ("Incorrect API key
   * provided: sk-…"): what the gateway must never pass on (docs/architecture.md).
   */
  echoKey?: boolean;
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

/** Entries of the last minute, oldest first; dropping the old ones costs nothing per entry. */
class Window<T extends { at: number }> {
  private entries: T[] = [];
  private head = 0;

  add(entry: T): void {
    this.entries.push(entry);
  }

  prune(now: number): void {
    while (this.head < this.entries.length && this.entries[this.head]!.at <= now - WINDOW_MS)
      this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  get size(): number {
    return this.entries.length - this.head;
  }

  first(): T | undefined {
    return this.entries[this.head];
  }

  sum(value: (entry: T) => number): number {
    let total = 0;
    for (let i = this.head; i < this.entries.length; i += 1) total += value(this.entries[i]!);
    return total;
  }
}

class Account {
  private readonly accepted = new Window<{ at: number }>();
  private readonly tokenLog = new Window<{ at: number; tokens: number }>();
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
    this.accepted.prune(now);
    this.tokenLog.prune(now);
  }

  private tokensInWindow(): number {
    return this.tokenLog.sum((entry) => entry.tokens);
  }

  /** Which limit refuses a request now, if any. */
  refusal(now: number, promptTokens: number): 'requests' | 'tokens' | 'concurrency' | null {
    this.prune(now);
    if (this.spec.rpm > 0 && this.accepted.size >= this.spec.rpm) return 'requests';
    if (this.spec.tpm > 0 && this.tokensInWindow() + promptTokens > this.spec.tpm) return 'tokens';
    if (this.spec.concurrency > 0 && this.stats.inFlight >= this.spec.concurrency)
      return 'concurrency';
    return null;
  }

  /** Seconds until the oldest request leaves the window. */
  retryAfterSeconds(now: number): number {
    const oldest = this.accepted.first()?.at ?? this.tokenLog.first()?.at ?? now;
    return Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000));
  }

  accept(now: number, promptTokens: number): void {
    this.accepted.add({ at: now });
    // Token counts matter only under a token limit; unlimited accounts keep none.
    if (this.spec.tpm > 0) this.tokenLog.add({ at: now, tokens: promptTokens });
    this.stats.inFlight += 1;
    this.stats.maxInFlight = Math.max(this.stats.maxInFlight, this.stats.inFlight);
    this.stats.maxRequestsPerWindow = Math.max(this.stats.maxRequestsPerWindow, this.accepted.size);
  }

  finish(completionTokens: number, outcome: 'served' | 'failed', promptTokens: number): void {
    this.stats.inFlight -= 1;
    this.stats[outcome] += 1;
    this.stats.tokens += promptTokens + completionTokens;
    if (this.spec.tpm > 0) this.tokenLog.add({ at: Date.now(), tokens: completionTokens });
  }
}

export type Admission =
  | { kind: 'unknown' }
  | { kind: 'banned'; echoKey: boolean }
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
    if (account.spec.banned) return { kind: 'banned', echoKey: account.spec.echoKey === true };
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
