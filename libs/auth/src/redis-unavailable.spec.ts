import { Logger, type LoggerService } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { createRedisClient, type RedisClient } from '@switchyard/messaging';
import { testRedisPrefix } from '@switchyard/testing';
import { LoginThrottle, unlockLogin } from './login-throttle.js';
import { withRedis } from './redis-unavailable.js';
import { SessionStore } from './session-store.js';

/** The error a call failed with (the test fails when it succeeds). */
async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('withRedis', () => {
  const logged: unknown[] = [];
  // Nothing listens on port 1: every command fails as it would during an outage.
  let away: RedisClient;

  beforeAll(() => {
    const capture: LoggerService = {
      log: () => undefined,
      warn: () => undefined,
      error: (message: unknown) => void logged.push(message),
    };
    Logger.overrideLogger(capture);
    away = createRedisClient({ url: 'redis://127.0.0.1:1', prefix: testRedisPrefix() });
  });

  afterAll(() => {
    away.disconnect();
  });

  it('passes results and our own refusals through untouched', async () => {
    expect(await withRedis('Counting', () => Promise.resolve(7))).toBe(7);
    const refusal = new ApiError('too_many_attempts', 'wait', undefined, { retryAfterSeconds: 3 });
    expect(await failure(withRedis('Counting', () => Promise.reject(refusal)))).toBe(refusal);
  });

  it('turns an unreachable Redis into 503 service_unavailable, and logs why', async () => {
    logged.length = 0;
    const error = await failure(withRedis('The session store', () => away.get('anything')));
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 503,
      code: 'service_unavailable',
      message: 'The session store is unavailable (Redis); try again shortly',
    });
    expect(logged).toEqual([
      expect.objectContaining({
        message: 'Redis unreachable: The session store is unavailable',
        reason: expect.any(String),
      }),
    ]);
  });

  it('guards every operation of the session store and the login throttle', async () => {
    const sessions = new SessionStore(away, { namespace: 'admin', ttlSeconds: 60 });
    const throttle = new LoginThrottle(away, {
      namespace: 'admin',
      freeFailuresPerAccountAddress: 1,
      freeFailuresPerAddress: 1,
      accountCeiling: 10,
      firstDelaySeconds: 1,
      maxDelaySeconds: 60,
    });
    const operations: (() => Promise<unknown>)[] = [
      () => sessions.issue(1),
      () => sessions.find(`sess-${'a'.repeat(43)}`),
      () => sessions.end(1, 'f'.repeat(64)),
      () => sessions.endAll(1),
      () => throttle.begin('someone', '192.0.2.1'),
      () => throttle.unlock('someone'),
      () => unlockLogin(away, 'chat', 'someone'),
    ];
    for (const operation of operations) {
      expect(await failure(operation())).toMatchObject({ code: 'service_unavailable' });
    }
    // A token not shaped like ours needs no Redis to be refused.
    expect(await sessions.find('sess-forged')).toBeNull();
  });
});
