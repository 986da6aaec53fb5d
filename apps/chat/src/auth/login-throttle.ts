import { Inject, Injectable } from '@nestjs/common';
import { ChatEnv } from '@switchyard/config';
import { ApiError } from '@switchyard/contracts';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { sha256Hex } from '@switchyard/security';
import { commit, withRedis } from '../common/redis.js';

// Failed logins are counted per username and per client address over a fixed window.
// Past the limit every attempt is refused, even with the right password, until the
// window ends: guessing gets no answer either way.

const SIGN_IN = 'Signing in';

const usernameKey = (username: string) => `chat:login-failures:user:${sha256Hex(username)}`;
const addressKey = (address: string) => `chat:login-failures:ip:${address}`;

@Injectable()
export class LoginThrottle {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly env: ChatEnv,
  ) {}

  /** Throws 429 `too_many_attempts` when either counter is at its limit. */
  async assertAllowed(username: string, address: string): Promise<void> {
    const [byUser, byAddress] = await withRedis(SIGN_IN, () =>
      this.redis.mget(usernameKey(username), addressKey(address)),
    );
    const blocked =
      Number(byUser ?? 0) >= this.env.LOGIN_MAX_FAILURES
        ? usernameKey(username)
        : Number(byAddress ?? 0) >= this.env.LOGIN_MAX_FAILURES_PER_IP
          ? addressKey(address)
          : null;
    if (blocked === null) return;
    const seconds = Math.max(await withRedis(SIGN_IN, () => this.redis.ttl(blocked)), 1);
    throw new ApiError(
      'too_many_attempts',
      `Too many failed logins; try again in ${Math.ceil(seconds / 60)} minute(s)`,
    );
  }

  async recordFailure(username: string, address: string): Promise<void> {
    const window = this.env.LOGIN_FAILURE_WINDOW_SECONDS;
    await withRedis(SIGN_IN, () =>
      commit(
        this.redis
          .multi()
          .incr(usernameKey(username))
          .expire(usernameKey(username), window, 'NX')
          .incr(addressKey(address))
          .expire(addressKey(address), window, 'NX'),
      ),
    );
  }

  async recordSuccess(username: string): Promise<void> {
    await withRedis(SIGN_IN, () => this.redis.del(usernameKey(username)));
  }
}
