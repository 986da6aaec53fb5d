import { ApiError } from '@switchyard/contracts';
import { sha256Hex } from '@switchyard/security';
import { type Redis } from 'ioredis';
import { commit, withRedis } from './redis-unavailable.js';

// Failed logins counted in Redis over a fixed window, per account and per client address,
// so every replica of a service shares one count. Once a count reaches its limit every
// attempt on that account or from that address is refused until its window ends, even
// with the right password: guessing gets no answer either way.

const SIGN_IN = 'Signing in';

export interface LoginThrottleOptions {
  /** Keys go under `<namespace>:` (inside the installation's Redis prefix): `admin`, `chat`. */
  namespace: string;
  /** Failures allowed per account (username, case-insensitive) within one window. */
  maxFailuresPerAccount: number;
  /** Failures allowed per client address within one window. */
  maxFailuresPerAddress: number;
  windowSeconds: number;
}

export class LoginThrottle {
  private readonly accountKey: (account: string) => string;
  private readonly addressKey: (address: string) => string;

  constructor(
    private readonly redis: Redis,
    private readonly options: LoginThrottleOptions,
  ) {
    // Usernames are hashed: the keys name nobody.
    this.accountKey = (account) =>
      `${options.namespace}:login-failures:account:${sha256Hex(account.toLowerCase())}`;
    this.addressKey = (address) => `${options.namespace}:login-failures:ip:${address}`;
  }

  /**
   * Throws 429 `too_many_attempts` when either count is at its limit, with the seconds until
   * every limit reached has lifted (sent as `Retry-After`).
   */
  async assertAllowed(account: string, address: string): Promise<void> {
    const [accountCount, accountTtl, addressCount, addressTtl] = await withRedis(SIGN_IN, () =>
      commit(
        this.redis
          .multi()
          .get(this.accountKey(account))
          .pttl(this.accountKey(account))
          .get(this.addressKey(address))
          .pttl(this.addressKey(address)),
      ),
    );
    const waits: number[] = [];
    if (Number(accountCount ?? 0) >= this.options.maxFailuresPerAccount) {
      waits.push(this.remainingMs(Number(accountTtl)));
    }
    if (Number(addressCount ?? 0) >= this.options.maxFailuresPerAddress) {
      waits.push(this.remainingMs(Number(addressTtl)));
    }
    if (waits.length === 0) return;
    const seconds = Math.max(1, Math.ceil(Math.max(...waits) / 1000));
    throw new ApiError(
      'too_many_attempts',
      `Too many failed logins; try again in ${Math.ceil(seconds / 60)} minute(s)`,
      undefined,
      { retryAfterSeconds: seconds },
    );
  }

  async recordFailure(account: string, address: string): Promise<void> {
    const window = this.options.windowSeconds;
    await withRedis(SIGN_IN, () =>
      commit(
        this.redis
          .multi()
          .incr(this.accountKey(account))
          .expire(this.accountKey(account), window, 'NX')
          .incr(this.addressKey(address))
          .expire(this.addressKey(address), window, 'NX'),
      ),
    );
  }

  /** A successful login forgives the account its failures; the address keeps its count. */
  async forgiveAccount(account: string): Promise<void> {
    await withRedis(SIGN_IN, () => this.redis.del(this.accountKey(account)));
  }

  /** PTTL of a count: -1 (no expiry, never set so) counts as a whole window. */
  private remainingMs(pttl: number): number {
    if (pttl === -1) return this.options.windowSeconds * 1000;
    return Math.max(0, pttl);
  }
}
