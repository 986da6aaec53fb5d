import { Inject, Injectable } from '@nestjs/common';
import { AdminEnv } from '@switchyard/config';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { sha256Hex } from '@switchyard/security';
import { RetryLaterError } from '../common/admin-exception.filter.js';

// Failed logins counted in Redis in fixed windows, per account and per client address,
// so every replica of the service shares one count. Once a count reaches its limit, every
// attempt on that account or from that address is refused until the window ends, even
// with the right password.

const accountKey = (username: string) =>
  `admin:login-failures:account:${sha256Hex(username.toLowerCase())}`;
const addressKey = (clientIp: string) => `admin:login-failures:ip:${clientIp}`;

@Injectable()
export class LoginThrottle {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly env: AdminEnv,
  ) {}

  /** Throws 429 `too_many_attempts` with the seconds to wait when either limit is reached. */
  async assertAllowed(username: string, clientIp: string): Promise<void> {
    const account = accountKey(username);
    const address = addressKey(clientIp);
    const results =
      (await this.redis.pipeline().get(account).pttl(account).get(address).pttl(address).exec()) ??
      [];
    const [accountCount, accountTtl, addressCount, addressTtl] = results.map(([error, value]) => {
      if (error) throw error;
      return Number(value ?? 0);
    });
    const waits: number[] = [];
    if ((accountCount ?? 0) >= this.env.LOGIN_MAX_FAILURES_PER_ACCOUNT) waits.push(accountTtl ?? 0);
    if ((addressCount ?? 0) >= this.env.LOGIN_MAX_FAILURES_PER_IP) waits.push(addressTtl ?? 0);
    if (waits.length > 0) {
      const windowMs = this.env.LOGIN_FAILURE_WINDOW_SECONDS * 1000;
      const waitMs = Math.max(...waits.map((ttl) => (ttl > 0 ? ttl : windowMs)));
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      throw new RetryLaterError(
        `Too many failed login attempts; try again in ${seconds} seconds`,
        seconds,
      );
    }
  }

  async recordFailure(username: string, clientIp: string): Promise<void> {
    const window = this.env.LOGIN_FAILURE_WINDOW_SECONDS;
    const results = await this.redis
      .multi()
      .incr(accountKey(username))
      .expire(accountKey(username), window, 'NX')
      .incr(addressKey(clientIp))
      .expire(addressKey(clientIp), window, 'NX')
      .exec();
    const failed = results?.find(([error]) => error !== null);
    if (failed?.[0]) throw failed[0];
  }

  /** A successful login forgives the account's failures; the address keeps its count. */
  async forgiveAccount(username: string): Promise<void> {
    await this.redis.del(accountKey(username));
  }
}
