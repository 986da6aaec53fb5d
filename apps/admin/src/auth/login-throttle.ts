import { Inject, Injectable, Logger } from '@nestjs/common';
import { AdminEnv } from '@switchyard/config';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { sha256Hex } from '@switchyard/security';
import { RetryLaterError } from '../common/admin-exception.filter.js';
import { unavailableWithoutRedis } from './redis-unavailable.js';

// Failed logins counted in Redis in fixed windows, per account and per client address,
// so every replica of the service shares one count. Once a count reaches its limit, every
// attempt on that account or from that address is refused until the window ends, even
// with the right password.

const accountKey = (username: string) =>
  `admin:login-failures:account:${sha256Hex(username.toLowerCase())}`;
const addressKey = (clientIp: string) => `admin:login-failures:ip:${clientIp}`;

@Injectable()
export class LoginThrottle {
  private readonly logger = new Logger('LoginThrottle');

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly env: AdminEnv,
  ) {}

  /** Throws 429 `too_many_attempts` with the seconds to wait when either limit is reached. */
  async assertAllowed(username: string, clientIp: string): Promise<void> {
    const account = accountKey(username);
    const address = addressKey(clientIp);
    const [accountCount = 0, accountTtl = 0, addressCount = 0, addressTtl = 0] =
      await unavailableWithoutRedis(this.logger, async () => {
        const results = await this.redis
          .pipeline()
          .get(account)
          .pttl(account)
          .get(address)
          .pttl(address)
          .exec();
        return (results ?? []).map(([error, value]) => {
          if (error) throw error;
          return Number(value ?? 0);
        });
      });
    const waits: number[] = [];
    if (accountCount >= this.env.LOGIN_MAX_FAILURES_PER_ACCOUNT) waits.push(accountTtl);
    if (addressCount >= this.env.LOGIN_MAX_FAILURES_PER_IP) waits.push(addressTtl);
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
    await unavailableWithoutRedis(this.logger, async () => {
      const results = await this.redis
        .multi()
        .incr(accountKey(username))
        .expire(accountKey(username), window, 'NX')
        .incr(addressKey(clientIp))
        .expire(addressKey(clientIp), window, 'NX')
        .exec();
      const failed = results?.find(([error]) => error !== null);
      if (failed?.[0]) throw failed[0];
    });
  }

  /** A successful login forgives the account's failures; the address keeps its count. */
  async forgiveAccount(username: string): Promise<void> {
    await unavailableWithoutRedis(this.logger, () => this.redis.del(accountKey(username)));
  }
}
