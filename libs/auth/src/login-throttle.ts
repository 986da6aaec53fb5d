import { ApiError } from '@switchyard/contracts';
import { sha256Hex } from '@switchyard/security';
import type { Cluster, Redis } from 'ioredis';
import { commit, withRedis } from './redis-unavailable.js';

// Failed sign-ins slow down the one who makes them, not the account they aim at
// (docs/reliability.md, "Sign-in throttling"). Three counts, shared by every replica in Redis:
//
// - per account and client address: a few failures are free, then each further one doubles
//   the wait before that address may try that account again, up to a cap. The owner, from
//   any other address, is not slowed by it;
// - per client address, across accounts (spraying one password over many names): the same
//   doubling, after more free failures;
// - per account from everywhere: a high ceiling against guessing from many addresses at
//   once. Only there is the owner refused too; the CLI's `unlock-login` lifts it.
//
// Every attempt is charged as a failure when it is let through and refunded when the
// password was right, so attempts sent in parallel cannot all slip into one free slot.
// Times come from `clock`, not from Redis, so the specs can move them; Redis's own expiry
// only collects records nobody has touched for `forgetAfterSeconds`.

const SIGN_IN = 'Signing in';

export interface LoginThrottleOptions {
  /** Keys go under `<namespace>:` (inside the installation's Redis prefix): `admin`, `chat`. */
  namespace: string;
  /** Failures one address may make on one account before each further one doubles the wait. */
  freeFailuresPerAccountAddress: number;
  /** Failures one address may make over all accounts before each further one doubles the wait. */
  freeFailuresPerAddress: number;
  /** Failures on one account from every address, within `forgetAfterSeconds` of the first,
   *  after which it is refused everywhere until that period ends or an operator unlocks it. */
  accountCeiling: number;
  /** The wait after the first failure past the free ones; each further failure doubles it. */
  firstDelaySeconds: number;
  maxDelaySeconds: number;
  /** Quiet time after which a count starts again from nothing; a day unless a spec says. */
  forgetAfterSeconds?: number;
  /** Milliseconds since the epoch; the specs pass their own. */
  clock?: () => number;
}

/**
 * How long a count lasts without a new failure, and the period of the account ceiling. The
 * longest delay must stay well below it, or an attacker who waits one out starts afresh.
 */
export const LOGIN_FAILURES_FORGOTTEN_AFTER_SECONDS = 86_400;

/** An attempt let through: `succeeded` when the password was right, nothing otherwise. */
export interface LoginAttempt {
  succeeded(): Promise<void>;
}

// KEYS: the account's hash, the address's hash. ARGV: address, now (ms), free per pair,
// free per address, ceiling, first delay (ms), max delay (ms), forget after (ms).
// Returns {0, the address's not-before ahead of this charge, and after it} when let
// through, or {ms to wait}.
// The account's hash holds its ceiling count (`total`, `since`) and, per address,
// `n:`, `t:` (not before) and `l:` (last failure); the address's hash holds `n`, `t`, `l`.
const BEGIN = `
local now = tonumber(ARGV[2])
local first, cap, forget = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local function num(v) return tonumber(v) or 0 end
local function delay(n, free)
  if n < free then return 0 end
  return math.min(first * 2 ^ (n - free), cap)
end
local addr = ARGV[1]
local total, since, pn, pt, pl = unpack(redis.call('HMGET', KEYS[1], 'total', 'since',
  'n:' .. addr, 't:' .. addr, 'l:' .. addr))
total, since, pn, pt, pl = num(total), num(since), num(pn), num(pt), num(pl)
local an, at, al = unpack(redis.call('HMGET', KEYS[2], 'n', 't', 'l'))
an, at, al = num(an), num(at), num(al)
if now - since >= forget then total = 0 end
if now - pl >= forget then pn = 0; pt = 0 end
if now - al >= forget then an = 0; at = 0 end
local wait = 0
if total >= tonumber(ARGV[5]) then wait = since + forget - now end
wait = math.max(wait, pt - now, at - now)
if wait > 0 then return {wait} end
if total == 0 then since = now end
pn = pn + 1
an = an + 1
redis.call('HSET', KEYS[1], 'total', total + 1, 'since', since,
  'n:' .. addr, pn, 't:' .. addr, now + delay(pn, tonumber(ARGV[3])), 'l:' .. addr, now)
local charged = now + delay(an, tonumber(ARGV[4]))
redis.call('HSET', KEYS[2], 'n', an, 't', charged, 'l', now)
redis.call('PEXPIRE', KEYS[1], forget)
redis.call('PEXPIRE', KEYS[2], forget)
return {0, at, charged}
`;

// The refund of a right password. KEYS as BEGIN; ARGV: address, the address's not-before
// ahead of the charge and after it (left alone when a later failure has moved it since). The pair starts again from nothing (whoever knows the password needs no
// slowing there); the address and the ceiling only lose this one charge, so signing in to
// an account of one's own does not clear a delay earned by spraying.
const SUCCEEDED = `
local addr = ARGV[1]
redis.call('HDEL', KEYS[1], 'n:' .. addr, 't:' .. addr, 'l:' .. addr)
if redis.call('HINCRBY', KEYS[1], 'total', -1) < 0 then redis.call('HSET', KEYS[1], 'total', 0) end
if redis.call('EXISTS', KEYS[2]) == 1 then
  if redis.call('HINCRBY', KEYS[2], 'n', -1) < 0 then redis.call('HSET', KEYS[2], 'n', 0) end
  if redis.call('HGET', KEYS[2], 't') == ARGV[3] then redis.call('HSET', KEYS[2], 't', ARGV[2]) end
end
return 0
`;

export class LoginThrottle {
  private readonly clock: () => number;

  constructor(
    private readonly redis: Redis | Cluster,
    private readonly options: LoginThrottleOptions,
  ) {
    this.clock = options.clock ?? Date.now;
  }

  private accountKey(account: string): string {
    return accountKey(this.options.namespace, account);
  }

  private addressKey(address: string): string {
    return `${this.options.namespace}:{login}:address:${address}`;
  }

  /**
   * Lets an attempt through, counted as a failure until `succeeded`, or throws 429
   * `too_many_attempts` with the seconds to wait (sent as `Retry-After`). The answer is the
   * same whether the account exists or not.
   */
  async begin(account: string, address: string): Promise<LoginAttempt> {
    const o = this.options;
    const keys = [this.accountKey(account), this.addressKey(address)];
    const result = (await withRedis(SIGN_IN, () =>
      this.redis.eval(
        BEGIN,
        2,
        ...keys,
        address,
        this.clock(),
        o.freeFailuresPerAccountAddress,
        o.freeFailuresPerAddress,
        o.accountCeiling,
        o.firstDelaySeconds * 1000,
        o.maxDelaySeconds * 1000,
        (o.forgetAfterSeconds ?? LOGIN_FAILURES_FORGOTTEN_AFTER_SECONDS) * 1000,
      ),
    )) as [number, number?, number?];
    const [wait, addressBefore, addressCharged] = result;
    if (wait > 0) throw tooManyAttempts(wait);
    return {
      succeeded: async () => {
        await withRedis(SIGN_IN, () =>
          this.redis.eval(SUCCEEDED, 2, ...keys, address, addressBefore ?? 0, addressCharged ?? 0),
        );
      },
    };
  }

  /**
   * Forgets every failure counted against the account, from every address, the ceiling
   * included: the operator's way back in (the admin CLI's `unlock-login`, a password reset).
   * Addresses keep their own counts.
   */
  async unlock(account: string): Promise<void> {
    await unlockLogin(this.redis, this.options.namespace, account);
  }
}

/** `LoginThrottle.unlock` for tools that know only the namespace (the admin CLI). */
export async function unlockLogin(
  redis: Redis | Cluster,
  namespace: string,
  account: string,
): Promise<void> {
  await withRedis(SIGN_IN, () => commit(redis.multi().del(accountKey(namespace, account))));
}

/** Usernames are hashed, case-insensitively: the keys name nobody. */
function accountKey(namespace: string, account: string): string {
  return `${namespace}:{login}:account:${sha256Hex(account.toLowerCase())}`;
}

function tooManyAttempts(waitMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  const when = seconds < 120 ? `${seconds} second(s)` : `${Math.ceil(seconds / 60)} minute(s)`;
  return new ApiError(
    'too_many_attempts',
    `Too many failed sign-in attempts; try again in ${when}`,
    undefined,
    { retryAfterSeconds: seconds },
  );
}
