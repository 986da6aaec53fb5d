import { once } from 'node:events';
import { createRedisClient, type RedisClient } from '@switchyard/messaging';
import { Redis } from 'ioredis';
import { clearRedisNamespace, testRedisPrefix } from '@switchyard/testing';
import { AccountLimiter, type AccountLimits } from './account-limiter.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('AccountLimiter (real Redis)', () => {
  const prefix = testRedisPrefix();
  let redis: RedisClient;
  let other: RedisClient;
  let limiter: AccountLimiter;
  let requestCounter = 0;
  const nextId = () => `req-${(requestCounter += 1)}`;

  beforeAll(async () => {
    redis = createRedisClient({ url, prefix });
    other = createRedisClient({ url, prefix });
    // The clients refuse commands until connected (no offline queue): wait for it, however
    // long a loaded machine takes.
    await Promise.all(
      [redis, other].map((client) =>
        client.status === 'ready' ? undefined : once(client, 'ready'),
      ),
    );
    limiter = new AccountLimiter(redis);
  });

  afterAll(async () => {
    await clearRedisNamespace(url, prefix);
    redis.disconnect();
    other.disconnect();
  });

  const account = (keyId: number, limits: Partial<AccountLimits>): AccountLimits => ({
    keyId,
    rpm: null,
    tpm: null,
    concurrency: null,
    ...limits,
  });

  it('takes the first account with room, then the next once it is full (requests per minute)', async () => {
    const accounts = [account(1, { rpm: 2 }), account(2, { rpm: 1 })];
    const now = 1_000_000;
    const results = [];
    for (let i = 0; i < 4; i += 1) {
      results.push(
        await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, accounts, now: now + i }),
      );
    }
    expect(results.map((r) => (r.kind === 'acquired' ? r.index : r.kind))).toEqual([
      0,
      0,
      1,
      'saturated',
    ]);
    const later = await limiter.acquire({
      requestId: nextId(),
      estimatedTokens: 1,
      accounts,
      now: now + 60_001,
    });
    expect(later).toMatchObject({ kind: 'acquired', index: 0 });
  });

  it('charges tokens per minute with an estimate and corrects it on release', async () => {
    const accounts = [account(3, { tpm: 100 })];
    const first = await limiter.acquire({ requestId: nextId(), estimatedTokens: 80, accounts });
    expect(first.kind).toBe('acquired');
    expect(
      (await limiter.acquire({ requestId: nextId(), estimatedTokens: 30, accounts })).kind,
    ).toBe('saturated');
    if (first.kind === 'acquired') first.lease.release(20);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(
      (await limiter.acquire({ requestId: nextId(), estimatedTokens: 30, accounts })).kind,
    ).toBe('acquired');
  });

  it('holds concurrency until the lease is released', async () => {
    const accounts = [account(4, { concurrency: 1 })];
    const held = await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, accounts });
    expect(
      (await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, accounts })).kind,
    ).toBe('saturated');
    if (held.kind === 'acquired') held.lease.release(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(
      (await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, accounts })).kind,
    ).toBe('acquired');
  });

  it('gives back many leases in one batch', async () => {
    const accounts = [account(9, { concurrency: 3, tpm: 1_000 })];
    const held = await Promise.all(
      Array.from({ length: 3 }, () =>
        limiter.acquire({ requestId: nextId(), estimatedTokens: 300, accounts }),
      ),
    );
    expect(held.map((r) => r.kind)).toEqual(['acquired', 'acquired', 'acquired']);
    for (const result of held) if (result.kind === 'acquired') result.lease.release(10);
    await limiter.flush();
    // Three slots free again, and 30 tokens used instead of the 900 estimated.
    const again = await Promise.all(
      Array.from({ length: 3 }, () =>
        limiter.acquire({ requestId: nextId(), estimatedTokens: 300, accounts }),
      ),
    );
    expect(again.map((r) => r.kind)).toEqual(['acquired', 'acquired', 'acquired']);
  });

  it('lets a concurrency lease of a dead holder expire on its own', async () => {
    const shortLeases = new AccountLimiter(redis, 100);
    const accounts = [account(5, { concurrency: 1 })];
    await shortLeases.acquire({ requestId: nextId(), estimatedTokens: 1, accounts });
    expect(
      (await shortLeases.acquire({ requestId: nextId(), estimatedTokens: 1, accounts })).kind,
    ).toBe('saturated');
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(
      (await shortLeases.acquire({ requestId: nextId(), estimatedTokens: 1, accounts })).kind,
    ).toBe('acquired');
  });

  it('refuses a token over its own request rate before looking at accounts', async () => {
    const accounts = [account(6, {})];
    const token = { id: 77, rateLimit: 2 };
    expect(
      (await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, token, accounts })).kind,
    ).toBe('acquired');
    expect(
      (await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, token, accounts })).kind,
    ).toBe('acquired');
    const refused = await limiter.acquire({
      requestId: nextId(),
      estimatedTokens: 1,
      token,
      accounts,
    });
    expect(refused.kind).toBe('token_rate_limited');
    expect(refused.kind === 'token_rate_limited' && refused.retryAfterMs).toBeGreaterThan(0);
  });

  it('never overshoots an account when two clients race for it', async () => {
    const accounts = [account(8, { rpm: 25 })];
    const limiters = [new AccountLimiter(redis), new AccountLimiter(other)];
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        limiters[i % 2]!.acquire({ requestId: nextId(), estimatedTokens: 1, accounts }),
      ),
    );
    expect(results.filter((r) => r.kind === 'acquired')).toHaveLength(25);
  });

  it('keeps its keys inside the namespace', async () => {
    const raw = new Redis(url);
    const inside = await raw.keys(`${prefix}:lim:*`);
    const outside = await raw.keys('lim:*');
    raw.disconnect();
    expect(inside.length).toBeGreaterThan(0);
    expect(outside).toEqual([]);
  });
});
