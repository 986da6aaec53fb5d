import { ApiError } from '@switchyard/contracts';
import { createRedisClient, type RedisClient } from '@switchyard/messaging';
import { sha256Hex } from '@switchyard/security';
import { clearRedisNamespace, redisReady, testRedisPrefix } from '@switchyard/testing';
import { LoginThrottle } from './login-throttle.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const WINDOW = 900;

/** The refusal `assertAllowed` threw, or null when it let the attempt through. */
async function refusal(attempt: Promise<void>): Promise<ApiError | null> {
  try {
    await attempt;
    return null;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

describe('LoginThrottle (real Redis)', () => {
  const prefix = testRedisPrefix();
  let redis: RedisClient;
  let throttle: LoginThrottle;
  let names = 0;
  const account = () => `someone-${(names += 1)}`;
  const address = () => `192.0.2.${(names += 1)}`;

  beforeAll(async () => {
    redis = createRedisClient({ url, prefix });
    await redisReady(redis);
    throttle = new LoginThrottle(redis, {
      namespace: 'chat',
      maxFailuresPerAccount: 3,
      maxFailuresPerAddress: 5,
      windowSeconds: WINDOW,
    });
  });

  afterAll(async () => {
    await clearRedisNamespace(url, prefix);
    redis.disconnect();
  });

  const fail = async (name: string, from: string, times: number) => {
    for (let i = 0; i < times; i += 1) await throttle.recordFailure(name, from);
  };

  it('refuses an account at its limit, from any address, with the seconds to wait', async () => {
    const name = account();
    const from = address();
    await fail(name, from, 2);
    expect(await refusal(throttle.assertAllowed(name, from))).toBeNull();
    await fail(name, from, 1);
    for (const source of [from, address()]) {
      const refused = await refusal(throttle.assertAllowed(name, source));
      expect(refused).toMatchObject({ code: 'too_many_attempts', status: 429 });
      expect(refused?.message).toMatch(/try again in \d+ minute/);
      expect(refused?.retryAfterSeconds).toBeGreaterThan(WINDOW - 60);
      expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(WINDOW);
    }
    // The address is not locked: another account still gets through from it.
    expect(await refusal(throttle.assertAllowed(account(), from))).toBeNull();
  });

  it('counts an account whatever the case of its name, and keeps the name out of Redis', async () => {
    const name = account();
    await throttle.recordFailure(name.toUpperCase(), address());
    await throttle.recordFailure(name, address());
    await throttle.recordFailure(`${name[0]!.toUpperCase()}${name.slice(1)}`, address());
    expect(await refusal(throttle.assertAllowed(name, address()))).toMatchObject({
      code: 'too_many_attempts',
    });
    expect(await redis.get(`chat:login-failures:account:${sha256Hex(name)}`)).toBe('3');
  });

  it('refuses an address at its limit, whatever the accounts, and only that address', async () => {
    const from = address();
    for (let i = 0; i < 5; i += 1) await throttle.recordFailure(account(), from);
    const refused = await refusal(throttle.assertAllowed(account(), from));
    expect(refused).toMatchObject({ code: 'too_many_attempts' });
    expect(refused?.retryAfterSeconds).toBeGreaterThan(0);
    expect(await refusal(throttle.assertAllowed(account(), address()))).toBeNull();
  });

  it('forgives the account on success, while the address keeps its count', async () => {
    const name = account();
    const from = address();
    await fail(name, from, 3);
    await throttle.forgiveAccount(name.toUpperCase());
    expect(await refusal(throttle.assertAllowed(name, from))).toBeNull();
    await fail(name, from, 2);
    // 5 failures from that address in all: it is now at its limit.
    expect(await refusal(throttle.assertAllowed(account(), from))).toMatchObject({
      code: 'too_many_attempts',
    });
  });

  it('counts over a fixed window: later failures do not extend it', async () => {
    const name = account();
    const from = address();
    await fail(name, from, 1);
    const key = `chat:login-failures:account:${sha256Hex(name)}`;
    const pttl = await redis.pttl(key);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(WINDOW * 1000);
    await redis.pexpire(key, 30_000);
    await fail(name, from, 2);
    expect(await redis.pttl(key)).toBeLessThanOrEqual(30_000);
    expect(await redis.get(key)).toBe('3');
  });

  it('asks for the longer wait when both the account and the address are locked', async () => {
    const name = account();
    const from = address();
    await fail(name, from, 5);
    await redis.pexpire(`chat:login-failures:account:${sha256Hex(name)}`, 20_000);
    await redis.pexpire(`chat:login-failures:ip:${from}`, 200_000);
    const refused = await refusal(throttle.assertAllowed(name, from));
    expect(refused?.retryAfterSeconds).toBeGreaterThan(190);
    expect(refused?.retryAfterSeconds).toBeLessThanOrEqual(200);
    // Only the account is locked from elsewhere: its own, shorter wait.
    const elsewhere = await refusal(throttle.assertAllowed(name, address()));
    expect(elsewhere?.retryAfterSeconds).toBeLessThanOrEqual(20);
  });

  it('keeps the counts of two namespaces apart', async () => {
    const admin = new LoginThrottle(redis, {
      namespace: 'admin',
      maxFailuresPerAccount: 1,
      maxFailuresPerAddress: 1,
      windowSeconds: WINDOW,
    });
    const name = account();
    const from = address();
    await fail(name, from, 3);
    expect(await refusal(admin.assertAllowed(name, from))).toBeNull();
  });
});
