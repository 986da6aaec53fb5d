import type { Redis } from 'ioredis';

// Per-account limits (requests and tokens per minute, requests at once) and per-token
// request rates, shared by every edge replica through Redis. One script checks a batch of
// candidate accounts in order and takes the first with room, atomically, in one round
// trip, so replicas never overshoot an account together.
//
// Requests per minute: a sliding log (exact). Tokens per minute: per-second buckets over
// the last 60 s, charged with an estimate at admission and corrected when the request
// ends. Concurrency: leases that expire on their own if an edge dies mid-request.

const WINDOW_MS = 60_000;

const ACQUIRE = `
local now = tonumber(ARGV[1])
local id = ARGV[2]
local estimate = tonumber(ARGV[3])
local leaseMs = tonumber(ARGV[4])
local tokenLimit = tonumber(ARGV[5])
local count = tonumber(ARGV[6])
local window = ${WINDOW_MS}
local first = 1
if tokenLimit > 0 then
  local key = KEYS[1]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if redis.call('ZCARD', key) >= tokenLimit then
    local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    return {-1, math.max(1, tonumber(oldest[2]) + window - now)}
  end
  redis.call('ZADD', key, now, id)
  redis.call('PEXPIRE', key, window)
  first = 2
end
local second = math.floor(now / 1000)
for i = 0, count - 1 do
  local rpm = tonumber(ARGV[7 + i * 3])
  local tpm = tonumber(ARGV[8 + i * 3])
  local conc = tonumber(ARGV[9 + i * 3])
  local rpmKey = KEYS[first + i * 3]
  local tpmKey = KEYS[first + i * 3 + 1]
  local concKey = KEYS[first + i * 3 + 2]
  local room = true
  if rpm > 0 then
    redis.call('ZREMRANGEBYSCORE', rpmKey, '-inf', now - window)
    if redis.call('ZCARD', rpmKey) >= rpm then room = false end
  end
  if room and tpm > 0 then
    local buckets = redis.call('HGETALL', tpmKey)
    local used = 0
    for b = 1, #buckets, 2 do
      if tonumber(buckets[b]) <= second - 60 then
        redis.call('HDEL', tpmKey, buckets[b])
      else
        used = used + tonumber(buckets[b + 1])
      end
    end
    if used + estimate > tpm then room = false end
  end
  if room and conc > 0 then
    redis.call('ZREMRANGEBYSCORE', concKey, '-inf', now)
    if redis.call('ZCARD', concKey) >= conc then room = false end
  end
  if room then
    if rpm > 0 then
      redis.call('ZADD', rpmKey, now, id)
      redis.call('PEXPIRE', rpmKey, window)
    end
    if tpm > 0 then
      redis.call('HINCRBY', tpmKey, second, estimate)
      redis.call('PEXPIRE', tpmKey, window + 1000)
    end
    if conc > 0 then
      redis.call('ZADD', concKey, now + leaseMs, id)
      redis.call('PEXPIRE', concKey, leaseMs)
    end
    return {i, 0}
  end
end
return {-2, 0}
`;

/**
 * Gives back what finished requests held: their concurrency slots, and their TPM estimates
 * corrected. Releases are batched (one script call for many requests every few
 * milliseconds), since they are off the client's path and each call costs a round trip.
 */
const RELEASE = `
local a = 0
for k = 1, #KEYS, 2 do
  local slot = ARGV[a + 1]
  local second = ARGV[a + 2]
  local correction = tonumber(ARGV[a + 3])
  if slot ~= '' then
    redis.call('ZREM', KEYS[k], slot)
  end
  if correction ~= 0 then
    redis.call('HINCRBY', KEYS[k + 1], second, correction)
  end
  a = a + 3
end
return 0
`;

const RELEASE_EVERY_MS = 5;
const RELEASE_BATCH = 100;

interface PendingRelease {
  keyId: number;
  slot: string;
  second: number;
  correction: number;
}

export interface AccountLimits {
  keyId: number;
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
}

export interface AcquireRequest {
  requestId: string;
  /** Tokens the request may use, charged against TPM until it ends. */
  estimatedTokens: number;
  /** The calling token's requests-per-minute limit, checked before any account. */
  token?: { id: number; rateLimit: number };
  /** Candidate accounts in the order the policy prefers them. */
  accounts: AccountLimits[];
  now?: number;
}

export type AcquireResult =
  | { kind: 'acquired'; index: number; lease: AccountLease }
  | { kind: 'token_rate_limited'; retryAfterMs: number }
  | { kind: 'saturated' };

/** What a request holds on its account; `release` once, when it ends. */
export interface AccountLease {
  keyId: number;
  release(actualTokens: number): void;
}

export function hasLimits(account: AccountLimits): boolean {
  return account.rpm !== null || account.tpm !== null || account.concurrency !== null;
}

type ScriptCommand<R> = (numberOfKeys: number, ...keysAndArgs: (string | number)[]) => Promise<R>;

const keyFor = {
  token: (tokenId: number) => `lim:t:${tokenId}:rpm`,
  rpm: (keyId: number) => `lim:k:${keyId}:rpm`,
  tpm: (keyId: number) => `lim:k:${keyId}:tpm`,
  concurrency: (keyId: number) => `lim:k:${keyId}:conc`,
};

export class AccountLimiter {
  private readonly acquireScript: ScriptCommand<[number, number]>;
  private readonly releaseScript: ScriptCommand<number>;
  private pending: PendingRelease[] = [];
  private releaseTimer: NodeJS.Timeout | undefined;

  /**
   * @param redis a client whose key prefix is the installation's namespace
   * @param leaseMs how long a concurrency slot survives an edge that died holding it
   */
  constructor(
    private readonly redis: Redis,
    private readonly leaseMs = 15 * 60_000,
  ) {
    redis.defineCommand('switchyardAcquireAccount', { lua: ACQUIRE });
    redis.defineCommand('switchyardReleaseAccount', { lua: RELEASE });
    const commands = redis as unknown as Record<string, ScriptCommand<never>>;
    this.acquireScript = commands.switchyardAcquireAccount!.bind(redis);
    this.releaseScript = commands.switchyardReleaseAccount!.bind(redis);
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const now = request.now ?? Date.now();
    const keys: string[] = [];
    const args: (string | number)[] = [
      now,
      request.requestId,
      request.estimatedTokens,
      this.leaseMs,
      request.token?.rateLimit ?? 0,
      request.accounts.length,
    ];
    if (request.token) keys.push(keyFor.token(request.token.id));
    for (const account of request.accounts) {
      keys.push(
        keyFor.rpm(account.keyId),
        keyFor.tpm(account.keyId),
        keyFor.concurrency(account.keyId),
      );
      args.push(account.rpm ?? 0, account.tpm ?? 0, account.concurrency ?? 0);
    }
    const [index, retryAfterMs] = await this.acquireScript(keys.length, ...keys, ...args);
    if (index === -1) return { kind: 'token_rate_limited', retryAfterMs };
    if (index === -2) return { kind: 'saturated' };
    const account = request.accounts[index]!;
    return {
      kind: 'acquired',
      index,
      lease: this.lease(account, request.requestId, request.estimatedTokens, now),
    };
  }

  /** A lease for an account without limits: nothing to give back. */
  static unlimited(keyId: number): AccountLease {
    return { keyId, release: () => undefined };
  }

  private lease(
    account: AccountLimits,
    requestId: string,
    estimate: number,
    acquiredAt: number,
  ): AccountLease {
    let released = false;
    return {
      keyId: account.keyId,
      release: (actualTokens: number) => {
        if (released) return;
        released = true;
        const slot = account.concurrency !== null ? requestId : '';
        const correction = account.tpm !== null ? actualTokens - estimate : 0;
        if (slot === '' && correction === 0) return;
        this.pending.push({
          keyId: account.keyId,
          slot,
          second: Math.floor(acquiredAt / 1000),
          correction,
        });
        if (this.pending.length >= RELEASE_BATCH) void this.flush();
        else this.releaseTimer ??= setTimeout(() => void this.flush(), RELEASE_EVERY_MS);
      },
    };
  }

  /**
   * Sends the releases waiting for their batch (also at shutdown). Best effort: a lost
   * release only delays the lease's own expiry.
   */
  async flush(): Promise<void> {
    clearTimeout(this.releaseTimer);
    this.releaseTimer = undefined;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    const keys = batch.flatMap((r) => [keyFor.concurrency(r.keyId), keyFor.tpm(r.keyId)]);
    const args = batch.flatMap((r) => [r.slot, r.second, r.correction]);
    await this.releaseScript(keys.length, ...keys, ...args).catch(() => undefined);
  }
}
