import { ApiError } from '@switchyard/contracts';
import { createRedisClient, redisReady, type RedisClient } from '@switchyard/messaging';
import { sha256Hex } from '@switchyard/security';
import { clearRedisNamespace, testRedisPrefix } from '@switchyard/testing';
import { Redis } from 'ioredis';
import { LoginThrottle, type LoginAttempt, type LoginThrottleOptions } from './login-throttle.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const HOUR = 3600;
const DAY = 86_400;

/** What `begin` answered: the attempt, or the 429 it threw. */
async function outcome(attempt: Promise<LoginAttempt>): Promise<LoginAttempt | ApiError> {
  try {
    return await attempt;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

async function refusal(attempt: Promise<LoginAttempt>): Promise<ApiError | null> {
  const result = await outcome(attempt);
  return result instanceof ApiError ? result : null;
}

describe('LoginThrottle (real Redis, a clock the test moves)', () => {
  const prefix = testRedisPrefix();
  let redis: RedisClient;
  let now = Date.UTC(2026, 10, 28, 12);
  const clock = () => now;
  const advance = (seconds: number) => void (now += seconds * 1000);
  let names = 0;
  const account = () => `someone-${(names += 1)}`;
  const address = () => `192.0.2.${(names += 1)}`;

  const options: LoginThrottleOptions = {
    namespace: 'chat',
    freeFailuresPerAccountAddress: 3,
    freeFailuresPerAddress: 6,
    accountCeiling: 40,
    firstDelaySeconds: 1,
    maxDelaySeconds: HOUR,
    forgetAfterSeconds: DAY,
    clock,
  };
  let throttle: LoginThrottle;

  beforeAll(async () => {
    redis = createRedisClient({ url, prefix });
    await redisReady(redis);
    throttle = new LoginThrottle(redis, options);
  });

  afterAll(async () => {
    await clearRedisNamespace(url, prefix);
    redis.disconnect();
  });

  /** A wrong password: let through and never told it succeeded. */
  const fail = async (name: string, from: string, times = 1) => {
    for (let i = 0; i < times; i += 1) await throttle.begin(name, from);
  };
  const signIn = async (name: string, from: string) =>
    (await throttle.begin(name, from)).succeeded();

  it('lets the owner in from another address while an attacker is being slowed down', async () => {
    const admin = account();
    const attacker = address();
    const owner = address();
    await fail(admin, attacker, 3);
    const refused = await refusal(throttle.begin(admin, attacker));
    expect(refused).toMatchObject({ status: 429, code: 'too_many_attempts' });
    expect(refused?.retryAfterSeconds).toBe(1);
    await expect(signIn(admin, owner)).resolves.toBeUndefined();
    // And the attacker is still slowed down after the owner's success.
    expect(await refusal(throttle.begin(admin, attacker))).not.toBeNull();
  });

  it('doubles the attacker’s wait at each failure past the free ones, up to the cap', async () => {
    const admin = account();
    const attacker = address();
    await fail(admin, attacker, 3);
    const waits: number[] = [];
    for (let i = 0; i < 16; i += 1) {
      const refused = await refusal(throttle.begin(admin, attacker));
      const wait = refused?.retryAfterSeconds ?? 0;
      waits.push(wait);
      advance(wait - 0.5);
      // Half a second early: still refused, nothing counted.
      expect(await refusal(throttle.begin(admin, attacker))).not.toBeNull();
      advance(0.5);
      await fail(admin, attacker);
    }
    expect(waits.slice(0, 13)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, HOUR]);
    expect(waits.slice(13)).toEqual([HOUR, HOUR, HOUR]);
    const refused = await refusal(throttle.begin(admin, attacker));
    expect(refused?.message).toBe('Too many failed sign-in attempts; try again in 60 minute(s)');
  });

  it('keeps the owner able to sign in from a fresh address whatever one attacker does', async () => {
    const admin = account();
    const attacker = address();
    // A day's worth of the attacker's best pace.
    for (let elapsed = 0; elapsed < DAY;) {
      const result = await outcome(throttle.begin(admin, attacker));
      const wait = result instanceof ApiError ? result.retryAfterSeconds! : 0;
      advance(wait);
      elapsed += wait;
    }
    await expect(signIn(admin, address())).resolves.toBeUndefined();
  });

  it('lets a right password through at once for every address that has no delay of its own', async () => {
    const admin = account();
    const [a, b, c] = [address(), address(), address()];
    await fail(admin, a, 3);
    await fail(admin, b, 2);
    await expect(signIn(admin, c)).resolves.toBeUndefined();
    expect(await refusal(throttle.begin(admin, a))).not.toBeNull();
    // The owner's own mistakes, then the right password from there: forgiven there only.
    await fail(admin, c, 3);
    expect(await refusal(throttle.begin(admin, c))).not.toBeNull();
    advance(1);
    await signIn(admin, c);
    await fail(admin, c, 3);
    expect(await refusal(throttle.begin(admin, c))).toMatchObject({ retryAfterSeconds: 1 });
  });

  it('slows down an address spraying many accounts, and only that address', async () => {
    const sprayer = address();
    for (let i = 0; i < 6; i += 1) await fail(account(), sprayer);
    const victim = account();
    const refused = await refusal(throttle.begin(victim, sprayer));
    expect(refused).toMatchObject({ code: 'too_many_attempts', retryAfterSeconds: 1 });
    advance(1);
    await fail(account(), sprayer);
    expect(await refusal(throttle.begin(account(), sprayer))).toMatchObject({
      retryAfterSeconds: 2,
    });
    advance(2);
    await fail(account(), sprayer);
    expect(await refusal(throttle.begin(account(), sprayer))).toMatchObject({
      retryAfterSeconds: 4,
    });
    // The sprayed accounts' owners elsewhere are untouched.
    await expect(signIn(victim, address())).resolves.toBeUndefined();
  });

  it('does not let a sprayer clear its delay by signing in to an account of its own', async () => {
    const sprayer = address();
    const own = account();
    for (let i = 0; i < 6; i += 1) await fail(account(), sprayer);
    advance(1);
    await fail(account(), sprayer);
    expect(await refusal(throttle.begin(own, sprayer))).toMatchObject({ retryAfterSeconds: 2 });
    advance(2);
    await signIn(own, sprayer);
    // The success refunded its own charge only: the next failure still waits 4 s, not 1.
    await fail(account(), sprayer);
    expect(await refusal(throttle.begin(account(), sprayer))).toMatchObject({
      retryAfterSeconds: 4,
    });
  });

  it('counts attempts sent together: they do not all slip into the free ones', async () => {
    const admin = account();
    const attacker = address();
    const results = await Promise.all(
      Array.from({ length: 20 }, () => outcome(throttle.begin(admin, attacker))),
    );
    expect(results.filter((r) => !(r instanceof ApiError))).toHaveLength(3);
  });

  it('refuses an account everywhere past its ceiling, until the CLI unlocks it', async () => {
    const admin = account();
    // Many addresses, each within its free failures: only the ceiling sees them together.
    for (let i = 0; i < 40; i += 1) await fail(admin, address());
    const refused = await refusal(throttle.begin(admin, address()));
    expect(refused).toMatchObject({ status: 429, code: 'too_many_attempts' });
    expect(refused?.retryAfterSeconds).toBe(DAY);
    await throttle.unlock(admin.toUpperCase());
    await expect(signIn(admin, address())).resolves.toBeUndefined();
  });

  it('ends the ceiling a day after its first failure', async () => {
    const admin = account();
    for (let i = 0; i < 20; i += 1) await fail(admin, address());
    advance(HOUR);
    for (let i = 0; i < 20; i += 1) await fail(admin, address());
    expect(await refusal(throttle.begin(admin, address()))).toMatchObject({
      retryAfterSeconds: DAY - HOUR,
    });
    advance(DAY - HOUR);
    await expect(signIn(admin, address())).resolves.toBeUndefined();
  });

  it('unlock clears every address’s delay on the account, not the addresses’ own counts', async () => {
    const admin = account();
    const attacker = address();
    await fail(admin, attacker, 3);
    for (let i = 0; i < 3; i += 1) await fail(account(), attacker);
    expect(await refusal(throttle.begin(admin, attacker))).not.toBeNull();
    await throttle.unlock(admin);
    // Still the address's own (spraying) delay.
    expect(await refusal(throttle.begin(admin, attacker))).not.toBeNull();
    const other = address();
    await fail(admin, other, 3);
    expect(await refusal(throttle.begin(admin, other))).not.toBeNull();
    await throttle.unlock(admin);
    await expect(signIn(admin, other)).resolves.toBeUndefined();
  });

  it('forgets failures after a quiet day', async () => {
    const admin = account();
    const from = address();
    await fail(admin, from, 3);
    expect(await refusal(throttle.begin(admin, from))).not.toBeNull();
    advance(DAY);
    await fail(admin, from, 3);
    expect(await refusal(throttle.begin(admin, from))).toMatchObject({ retryAfterSeconds: 1 });
  });

  it('counts an account whatever the case of its name, and keeps the name out of Redis', async () => {
    const name = account();
    const from = address();
    await fail(name.toUpperCase(), from);
    await fail(name, from);
    await fail(`${name[0]!.toUpperCase()}${name.slice(1)}`, from);
    expect(await refusal(throttle.begin(name, from))).toMatchObject({
      code: 'too_many_attempts',
    });
    const raw = new Redis(url);
    try {
      const keys = await raw.keys(`${prefix}:chat:{login}:*`);
      expect(keys).toContain(`${prefix}:chat:{login}:account:${sha256Hex(name)}`);
      expect(keys.join()).not.toContain(name);
    } finally {
      raw.disconnect();
    }
  });

  it('answers the same for accounts that exist and names nobody has', async () => {
    // The throttle knows no accounts: a 429 says nothing about whether the name exists.
    const [a, b] = [account(), `nobody-${account()}`];
    const from = address();
    await fail(a, from, 3);
    const elsewhere = address();
    await fail(b, elsewhere, 3);
    const first = await refusal(throttle.begin(a, from));
    const second = await refusal(throttle.begin(b, elsewhere));
    expect(first).not.toBeNull();
    expect(first?.message).toBe(second?.message);
  });

  it('keeps the counts of two namespaces apart', async () => {
    const admin = new LoginThrottle(redis, { ...options, namespace: 'admin' });
    const name = account();
    const from = address();
    await fail(name, from, 3);
    expect(await refusal(throttle.begin(name, from))).not.toBeNull();
    await expect(admin.begin(name, from)).resolves.toBeDefined();
  });
});
