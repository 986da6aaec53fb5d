import { randomBytes } from 'node:crypto';
import { TurnBatchedScript } from '@switchyard/messaging';
import type { Cluster, Redis } from 'ioredis';
import {
  Allowance,
  DEFAULT_VALIDITY_MS,
  type Giveback,
  type Hold,
  type Limits,
  type Timing,
  type Wants,
} from './allowance.js';

// Per-account limits (requests and tokens per minute, requests at once) and per-token
// request rates, shared by every edge replica through Redis. One script checks a batch of
// candidate accounts in order and takes the first with room, atomically, in one round
// trip, so replicas never overshoot an account together.
//
// Requests per minute: a sliding log (exact). Tokens per minute: per-second buckets over
// the last 60 s, charged with an estimate at admission and corrected when the request
// ends. Concurrency: leases that expire on their own if an edge dies mid-request.
//
// The script takes a block of units at once when the edge's demand for an account is
// high enough, and the edge spends the block without a round trip (an allowance,
// `allowance.ts`); near a limit the blocks shrink to the one unit the request needs.
// Why this never counts fewer requests than were served: docs/architecture.md,
// "Account limits".

const WINDOW_MS = 60_000;

/** A freed concurrency slot is reused only while its lease is this young (then returned). */
const SLOT_REUSE_MS = 5_000;

/** Every this often, blocks past their validity and idle slots are given back. */
const SWEEP_EVERY_MS = 100;

const ACQUIRE = `
-- One admission: K and A are its KEYS and ARGV.
local function run(K, A)
  local now = tonumber(A[1])
  local prefix = A[2]
  local estimate = tonumber(A[3])
  local leaseMs = tonumber(A[4])
  local validity = tonumber(A[5])
  local tokenLimit = tonumber(A[6])
  local tokenSpare = tonumber(A[7])
  local count = tonumber(A[8])
  local window = ${WINDOW_MS}
  -- Members <prefix>:0..n-1: the first for the request in hand, the others spare, scored at
  -- the latest moment they may be spent so that the log never counts less than was served.
  local function add(key, n, first, rest)
    local args = {}
    for i = 0, n - 1 do
      args[#args + 1] = (i == 0) and first or rest
      args[#args + 1] = prefix .. ':' .. i
    end
    redis.call('ZADD', key, unpack(args))
  end
  local keyIndex = 1
  local tokenEntries = 0
  if tokenLimit > 0 then
    local key = K[1]
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
    local room = tokenLimit - redis.call('ZCARD', key)
    if room < 1 then
      local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
      return {-1, math.max(1, tonumber(oldest[2]) + window - now), 0, 0, 0, 0}
    end
    tokenEntries = math.min(room, 1 + tokenSpare)
    add(key, tokenEntries, now, now + validity)
    redis.call('PEXPIRE', key, window + validity)
    keyIndex = 2
  end
  local second = math.floor(now / 1000)
  local spareSecond = math.floor((now + validity) / 1000)
  for i = 0, count - 1 do
    local a = 9 + i * 6
    local rpm = tonumber(A[a])
    local tpm = tonumber(A[a + 1])
    local conc = tonumber(A[a + 2])
    local rpmKey = K[keyIndex + i * 3]
    local tpmKey = K[keyIndex + i * 3 + 1]
    local concKey = K[keyIndex + i * 3 + 2]
    local rpmRoom, tpmRoom, concRoom = 0, 0, 0
    local room = true
    if rpm > 0 then
      redis.call('ZREMRANGEBYSCORE', rpmKey, '-inf', now - window)
      rpmRoom = rpm - redis.call('ZCARD', rpmKey)
      if rpmRoom < 1 then room = false end
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
      tpmRoom = tpm - used
      if tpmRoom < estimate then room = false end
    end
    if room and conc > 0 then
      redis.call('ZREMRANGEBYSCORE', concKey, '-inf', now)
      concRoom = conc - redis.call('ZCARD', concKey)
      if concRoom < 1 then room = false end
    end
    if room then
      local entries, tokens, slots = 0, 0, 0
      if rpm > 0 then
        entries = math.min(rpmRoom, 1 + tonumber(A[a + 3]))
        add(rpmKey, entries, now, now + validity)
        redis.call('PEXPIRE', rpmKey, window + validity)
      end
      if tpm > 0 then
        tokens = estimate + math.min(tpmRoom - estimate, tonumber(A[a + 4]))
        redis.call('HINCRBY', tpmKey, second, estimate)
        if tokens > estimate then
          redis.call('HINCRBY', tpmKey, spareSecond, tokens - estimate)
        end
        redis.call('PEXPIRE', tpmKey, window + validity + 1000)
      end
      if conc > 0 then
        slots = math.min(concRoom, 1 + tonumber(A[a + 5]))
        add(concKey, slots, now + leaseMs, now + leaseMs)
        redis.call('PEXPIRE', concKey, leaseMs)
      end
      return {i, 0, tokenEntries, entries, tokens, slots}
    end
  end
  return {-2, 0, tokenEntries, 0, 0, 0}
end
`;

/**
 * Gives back what finished requests and expired blocks held: concurrency slots, unspent
 * log entries, unspent tokens and corrected estimates. Batched (one script call for many
 * every few milliseconds), since it is off the client's path and each call costs a round
 * trip. A token bucket already gone is not recreated.
 */
const RELEASE = `
for k = 1, #KEYS do
  local a = (k - 1) * 4
  local kind = ARGV[a + 1]
  if kind == 's' then
    redis.call('ZREM', KEYS[k], ARGV[a + 2])
  elseif kind == 'h' then
    if redis.call('HEXISTS', KEYS[k], ARGV[a + 2]) == 1 then
      redis.call('HINCRBY', KEYS[k], ARGV[a + 2], tonumber(ARGV[a + 3]))
    end
  else
    local members = {}
    for i = tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]) - 1 do
      members[#members + 1] = ARGV[a + 2] .. ':' .. i
    end
    if #members > 0 then redis.call('ZREM', KEYS[k], unpack(members)) end
  end
end
return 0
`;

/**
 * How soon a slot given back reaches Redis: a replica waiting at the concurrency limit sees
 * it this much later.
 */
const RELEASE_SLOTS_MS = 5;
/**
 * How soon the rest reaches Redis, unless a slot takes it along: a request's token
 * correction and the spares of an expired block. Mostly they give back an estimate that
 * was higher than the use. They land in minute-long windows, so a wait of 50 ms changes
 * little, and it saves the edge and Redis a script call every 5 ms (docs/performance.md,
 * "Corrections every 50 ms").
 */
const CORRECTION_WAIT_MS = 50;
const RELEASE_BATCH = 100;

export interface AccountLimits extends Limits {
  keyId: number;
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
  | { kind: 'acquired'; index: number; lease: AccountLease; roundTrip: boolean }
  | { kind: 'token_rate_limited'; retryAfterMs: number }
  | { kind: 'saturated' };

/** What a request holds on its account; `release` once, when it ends. */
export interface AccountLease {
  keyId: number;
  release(actualTokens: number): void;
}

export interface LimiterOptions {
  /** How long a concurrency slot survives an edge that died holding it. */
  leaseMs?: number;
  /** How long a block of requests or tokens may be spent after it was taken. */
  validityMs?: number;
  /** How long what finished requests give back, other than slots, may wait for its batch. */
  correctionWaitMs?: number;
}

export function hasLimits(account: Limits): boolean {
  return account.rpm !== null || account.tpm !== null || account.concurrency !== null;
}

type ScriptCommand<R> = (numberOfKeys: number, ...keysAndArgs: (string | number)[]) => Promise<R>;

/** index (-1 token limited, -2 none with room), retry after, then the units granted. */
type AcquireReply = [number, number, number, number, number, number];

/**
 * One hash tag for every limiter key: a script takes a token's key and several candidate
 * accounts' at once, so on a Redis Cluster they must all be on one slot (and so on one
 * node: docs/scaling.md, "Redis").
 */
const keyFor = {
  token: (tokenId: number) => `{lim}:t:${tokenId}:rpm`,
  rpm: (keyId: number) => `{lim}:k:${keyId}:rpm`,
  tpm: (keyId: number) => `{lim}:k:${keyId}:tpm`,
  concurrency: (keyId: number) => `{lim}:k:${keyId}:conc`,
};

/** An account taken without asking Redis: one without limits, or one whose allowance had room. */
interface LocalAdmission {
  index: number;
  keyId: number;
  allowance: Allowance | null;
  hold: Hold | null;
}

export class AccountLimiter {
  /**
   * A turn's admissions go as one script call: every limiter key shares one hash tag, so
   * they may, on a cluster too (docs/architecture.md, "Account limits").
   */
  private readonly acquireScript: TurnBatchedScript<AcquireReply>;
  private readonly releaseScript: ScriptCommand<number>;
  private readonly leaseMs: number;
  private readonly validityMs: number;
  private readonly slotReuseMs: number;
  private readonly correctionWaitMs: number;
  /** Names this edge's log entries and slots apart from other replicas'. */
  private readonly edgeId = randomBytes(6).toString('hex');
  private sequence = 0;
  private readonly accounts = new Map<number, Allowance>();
  private readonly tokens = new Map<number, Allowance>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private pending: Giveback[] = [];
  private releaseTimer: NodeJS.Timeout | undefined;
  /** When the armed release timer fires (`performance.now()`). */
  private releaseDue = 0;

  /** @param redis a client whose key prefix is the installation's namespace */
  constructor(
    private readonly redis: Redis | Cluster,
    options: LimiterOptions = {},
  ) {
    this.leaseMs = options.leaseMs ?? 15 * 60_000;
    this.validityMs = options.validityMs ?? DEFAULT_VALIDITY_MS;
    // A reused slot keeps most of its lease, so a request on it is covered as long as one
    // on a fresh slot.
    this.slotReuseMs = Math.min(SLOT_REUSE_MS, this.leaseMs / 2);
    this.correctionWaitMs = options.correctionWaitMs ?? CORRECTION_WAIT_MS;
    this.acquireScript = new TurnBatchedScript(redis, 'switchyardAcquireAccount', ACQUIRE);
    redis.defineCommand('switchyardReleaseAccount', { lua: RELEASE });
    const commands = redis as unknown as Record<string, ScriptCommand<never>>;
    this.releaseScript = commands.switchyardReleaseAccount!.bind(redis);
  }

  /**
   * The first account, in the given order, with room. An account whose allowance here
   * covers the request is taken without Redis, unless an account before it needs asking;
   * the token's rate likewise.
   */
  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const now = request.now ?? Date.now();
    const estimate = request.estimatedTokens;
    const token = request.token && this.tokenAllowance(request.token);
    const asked: { allowance: Allowance; wants: Wants }[] = [];
    let local: LocalAdmission | undefined;
    for (const [index, account] of request.accounts.entries()) {
      if (!hasLimits(account)) {
        local = { index, keyId: account.keyId, allowance: null, hold: null };
        break;
      }
      const allowance = this.accountAllowance(account);
      // Its block runs low: the request asks Redis for itself and the next block, and keeps
      // what it holds here for when Redis has no room left. Asked before the hold, which
      // goes back when the script grants the request its own unit.
      const renewal = allowance.renewing(estimate, now) ? allowance.wants(estimate, now) : null;
      const hold = allowance.hold(estimate, now);
      if (hold) {
        local = { index, keyId: account.keyId, allowance, hold };
        if (renewal) asked.push({ allowance, wants: renewal });
        break;
      }
      asked.push({ allowance, wants: renewal ?? allowance.wants(estimate, now) });
    }
    // Every account asked is only renewed: what is held here covers the request. The token's
    // block is renewed only then, so that a token with no room left in Redis leaves the
    // request to what is held here, as an account with none does.
    const coveredHere =
      local !== undefined && asked.every(({ allowance }) => allowance === local?.allowance);
    const tokenRenewal =
      token && coveredHere && token.renewing(0, now) ? token.wants(0, now) : null;
    const tokenHold = token?.hold(0, now) ?? null;
    const tokenRenewing = tokenHold !== null && tokenRenewal !== null;
    if (token && tokenHold) token.admitted(now);
    const tokenAsked = token && !tokenHold ? (tokenRenewal ?? token.wants(0, now)) : tokenRenewal;
    if (tokenAsked === null && asked.length === 0) {
      if (!local) return { kind: 'saturated' };
      return this.admitLocally(local, now, false);
    }

    const prefix = `${this.edgeId}:${(this.sequence += 1)}`;
    const keys: string[] = [];
    const args: (string | number)[] = [
      now,
      prefix,
      estimate,
      this.leaseMs,
      this.validityMs,
      tokenAsked ? request.token!.rateLimit : 0,
      tokenAsked?.entries ?? 0,
      asked.length,
    ];
    if (tokenAsked) keys.push(token!.keys.rpm);
    for (const { allowance, wants } of asked) {
      const { limits } = allowance;
      keys.push(allowance.keys.rpm, allowance.keys.tpm, allowance.keys.concurrency);
      args.push(
        limits.rpm ?? 0,
        limits.tpm ?? 0,
        limits.concurrency ?? 0,
        wants.entries,
        wants.tokens,
        wants.slots,
      );
    }
    // Only renewals asked: what is held here serves the request whatever Redis answers.
    const renewalsOnly = coveredHere && (tokenAsked === null || tokenRenewing);
    let reply: AcquireReply;
    try {
      reply = await this.acquireScript.call(keys, args);
    } catch (error) {
      if (renewalsOnly) return this.admitLocally(local!, now, true);
      this.unhold(local);
      throw error;
    } finally {
      for (const { allowance, wants } of asked) allowance.answered(wants);
      if (tokenAsked) token!.answered(tokenAsked);
    }
    const [index, retryAfterMs, tokenEntries, entries, tokens, slots] = reply;
    if (index === -1) {
      if (tokenRenewing) return this.admitLocally(local!, now, true);
      this.unhold(local);
      return { kind: 'token_rate_limited', retryAfterMs };
    }
    if (tokenAsked) {
      // A renewing request's unit is the script's first entry: the one held here goes back.
      if (tokenRenewing) token!.unhold(tokenHold);
      token!.install({ prefix, entries: tokenEntries, tokens: 0, slots: 0 }, 0, now);
      if (!tokenRenewing) token!.admitted(now);
    }
    if (index === -2) {
      if (!local) return { kind: 'saturated' };
      return this.admitLocally(local, now, true);
    }
    this.unhold(local);
    const allowance = asked[index]!.allowance;
    const hold = allowance.install({ prefix, entries, tokens, slots }, estimate, now);
    allowance.admitted(now);
    return {
      kind: 'acquired',
      index,
      lease: this.lease(allowance, hold),
      roundTrip: true,
    };
  }

  /** A lease for an account without limits: nothing to give back. */
  static unlimited(keyId: number): AccountLease {
    return { keyId, release: () => undefined };
  }

  /**
   * Gives back everything held ahead of demand and what finished requests held, and
   * sends it (at shutdown). Requests still running give theirs back when they end.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    for (const allowance of [...this.accounts.values(), ...this.tokens.values()])
      this.pending.push(...allowance.drain());
    this.accounts.clear();
    this.tokens.clear();
    await this.flush();
  }

  /**
   * Sends the releases waiting for their batch. Best effort: a lost release only delays
   * the lease's own expiry, and unspent units their block's.
   */
  async flush(): Promise<void> {
    clearTimeout(this.releaseTimer);
    this.releaseTimer = undefined;
    const batch = summedCorrections(this.pending);
    this.pending = [];
    if (batch.length === 0) return;
    const keys = batch.map((giveback) => giveback.key);
    const args = batch.flatMap((giveback) => {
      switch (giveback.kind) {
        case 'slot':
          return ['s', giveback.id, '', ''];
        case 'tokens':
          return ['h', giveback.second, giveback.delta, ''];
        case 'entries':
          return ['e', giveback.prefix, giveback.from, giveback.to];
      }
    });
    await this.releaseScript(keys.length, ...keys, ...args).catch(() => undefined);
  }

  private admitLocally(local: LocalAdmission, now: number, roundTrip: boolean): AcquireResult {
    const { index, allowance, hold } = local;
    if (!allowance || !hold) {
      return { kind: 'acquired', index, lease: AccountLimiter.unlimited(local.keyId), roundTrip };
    }
    allowance.admitted(now);
    return { kind: 'acquired', index, lease: this.lease(allowance, hold), roundTrip };
  }

  private unhold(local: LocalAdmission | undefined): void {
    if (local?.allowance && local.hold) local.allowance.unhold(local.hold);
  }

  private lease(allowance: Allowance, hold: Hold): AccountLease {
    let released = false;
    return {
      keyId: allowance.keyId,
      release: (actualTokens: number) => {
        if (released) return;
        released = true;
        this.giveBack(allowance.finish(hold, actualTokens, Date.now()));
      },
    };
  }

  private giveBack(givebacks: Giveback[]): void {
    if (givebacks.length === 0) return;
    this.pending.push(...givebacks);
    if (this.pending.length >= RELEASE_BATCH) {
      void this.flush();
      return;
    }
    const wait = givebacks.some((giveback) => giveback.kind === 'slot')
      ? RELEASE_SLOTS_MS
      : this.correctionWaitMs;
    const due = performance.now() + wait;
    if (this.releaseTimer && this.releaseDue <= due) return;
    clearTimeout(this.releaseTimer);
    this.releaseDue = due;
    this.releaseTimer = setTimeout(() => void this.flush(), wait);
  }

  private accountAllowance(account: AccountLimits): Allowance {
    let allowance = this.accounts.get(account.keyId);
    if (!allowance) {
      const keys = {
        rpm: keyFor.rpm(account.keyId),
        tpm: keyFor.tpm(account.keyId),
        concurrency: keyFor.concurrency(account.keyId),
      };
      allowance = this.track(new Allowance(account.keyId, keys, account, this.timing));
      this.accounts.set(account.keyId, allowance);
    }
    // Limits follow the routing snapshot: an edited limit applies to the next block.
    allowance.limits = account;
    return allowance;
  }

  private tokenAllowance(token: { id: number; rateLimit: number }): Allowance {
    let allowance = this.tokens.get(token.id);
    if (!allowance) {
      const key = keyFor.token(token.id);
      const limits = { rpm: token.rateLimit, tpm: null, concurrency: null };
      allowance = this.track(
        new Allowance(token.id, { rpm: key, tpm: key, concurrency: key }, limits, this.timing),
      );
      this.tokens.set(token.id, allowance);
    }
    allowance.limits = { rpm: token.rateLimit, tpm: null, concurrency: null };
    return allowance;
  }

  private get timing(): Timing {
    return { validityMs: this.validityMs, slotReuseMs: this.slotReuseMs };
  }

  private track(allowance: Allowance): Allowance {
    if (this.closed) allowance.drain();
    this.sweepTimer ??= setInterval(() => this.sweep(), SWEEP_EVERY_MS).unref();
    return allowance;
  }

  private sweep(): void {
    const now = Date.now();
    for (const allowances of [this.accounts, this.tokens]) {
      for (const [id, allowance] of allowances) {
        this.giveBack(allowance.sweep(now));
        if (allowance.empty) allowances.delete(id);
      }
    }
    if (this.accounts.size + this.tokens.size === 0) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = undefined;
    }
  }
}

/**
 * One token correction per bucket: the requests of a batch were mostly charged to the same
 * second or two, so their corrections add up to a single `HINCRBY` each.
 */
function summedCorrections(givebacks: Giveback[]): Giveback[] {
  const sums = new Map<string, Extract<Giveback, { kind: 'tokens' }>>();
  const others: Giveback[] = [];
  for (const giveback of givebacks) {
    if (giveback.kind !== 'tokens') {
      others.push(giveback);
      continue;
    }
    const bucket = `${giveback.key} ${giveback.second}`;
    const sum = sums.get(bucket);
    if (sum) sum.delta += giveback.delta;
    else sums.set(bucket, { ...giveback });
  }
  return [...others, ...[...sums.values()].filter((sum) => sum.delta !== 0)];
}
