import { Logger } from '@nestjs/common';
import { createRedisClient, inNamespace, type RedisClient } from '@switchyard/messaging';
import { clearRedisNamespace, waitFor, testRedisPrefix } from '@switchyard/testing';
import { Redis } from 'ioredis';
import { LOCK_TTL_MS, LeaderLock } from './leader-lock.js';

// The lease in the real Redis: one leader at a time, renewed while it lives, handed over at
// shutdown, and taken over by a standby when the leader can no longer prove it holds it.

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LOCK_KEY = 'router:leader';
/** Renewals come every third of the lease; a standby's attempts at the same pace. */
const ONE_PERIOD_MS = LOCK_TTL_MS / 3;

describe('LeaderLock (real Redis)', () => {
  const prefix = testRedisPrefix();
  const raw = new Redis(redisUrl, { keyPrefix: inNamespace(prefix, '') });
  const running: { lock: LeaderLock; redis: RedisClient }[] = [];

  /** A router's lock, started as at bootstrap; `changes` records what its listeners heard. */
  async function startLock(): Promise<{
    lock: LeaderLock;
    redis: RedisClient;
    changes: boolean[];
  }> {
    const redis = createRedisClient({ url: redisUrl, prefix });
    await waitFor(() => redis.ping(), { what: 'a connection to Redis' });
    const lock = new LeaderLock(redis);
    const changes: boolean[] = [];
    lock.onChange((leading) => changes.push(leading));
    lock.onApplicationBootstrap();
    running.push({ lock, redis });
    return { lock, redis, changes };
  }

  /** A lock that has taken the lease. */
  async function startLeader(): ReturnType<typeof startLock> {
    const leader = await startLock();
    await waitFor(() => leader.lock.isLeader, { what: 'a leader' });
    return leader;
  }

  const holder = () => raw.get(LOCK_KEY);

  afterEach(async () => {
    for (const { lock, redis } of running.splice(0)) {
      await lock.onApplicationShutdown();
      if (redis.status !== 'end') await redis.quit();
    }
    await raw.del(LOCK_KEY);
  });

  beforeAll(() => Logger.overrideLogger(false));

  afterAll(async () => {
    await raw.quit();
    await clearRedisNamespace(redisUrl, prefix);
  });

  it('lets one router lead and keeps the other standing by', async () => {
    const first = await startLeader();
    const second = await startLock();
    // The standby's first attempt has been refused once a whole period has passed.
    await new Promise((resolve) => setTimeout(resolve, ONE_PERIOD_MS + 200));
    expect([first.lock.isLeader, second.lock.isLeader]).toEqual([true, false]);
    expect(await holder()).toBe(first.lock.instanceId);
    expect([first.changes, second.changes]).toEqual([[true], []]);
  });

  it('renews its lease before the lease runs out', async () => {
    const leader = await startLeader();
    const first = await raw.pttl(LOCK_KEY);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThanOrEqual(LOCK_TTL_MS);
    // Left alone the time to live only falls: it rising above the lowest read is a renewal.
    // (Read in the millisecond the lease was set, the first is the whole lease, which a
    // renewal only equals.)
    let lowest = first;
    await waitFor(
      async () => {
        const ttl = await raw.pttl(LOCK_KEY);
        if (ttl > lowest) return true;
        lowest = ttl;
        return undefined;
      },
      { timeoutMs: LOCK_TTL_MS - 500, what: 'a renewal' },
    );
    expect(await holder()).toBe(leader.lock.instanceId);
    expect(leader.changes).toEqual([true]);
  });

  it('steps down, and says so, when it finds its lease held by another', async () => {
    const leader = await startLeader();
    // As if the lease had expired and another router had taken it meanwhile.
    await raw.set(LOCK_KEY, 'another-router', 'PX', LOCK_TTL_MS);
    await waitFor(() => !leader.lock.isLeader, {
      timeoutMs: ONE_PERIOD_MS * 2,
      what: 'stepping down',
    });
    expect(leader.changes).toEqual([true, false]);
    // It renews only its own lease: the other router's is left alone.
    expect(await holder()).toBe('another-router');
  });

  it('hands over at shutdown: the standby leads within one period, not a whole lease', async () => {
    const leader = await startLeader();
    const standby = await startLock();
    await leader.lock.onApplicationShutdown();
    expect(leader.lock.isLeader).toBe(false);
    const handedOver = Date.now();
    await waitFor(() => standby.lock.isLeader, {
      timeoutMs: ONE_PERIOD_MS + 1_000,
      what: 'a takeover',
    });
    expect(Date.now() - handedOver).toBeLessThan(LOCK_TTL_MS);
    expect(await holder()).toBe(standby.lock.instanceId);
  });

  it('steps down without Redis, and a standby takes over once the lease expires', async () => {
    const leader = await startLeader();
    const standby = await startLock();
    leader.redis.disconnect();
    await waitFor(() => !leader.lock.isLeader, {
      timeoutMs: ONE_PERIOD_MS * 2,
      what: 'stepping down',
    });
    expect(standby.lock.isLeader).toBe(false);
    await waitFor(() => standby.lock.isLeader, {
      timeoutMs: LOCK_TTL_MS + ONE_PERIOD_MS + 1_000,
      what: 'a takeover',
    });
    expect(await holder()).toBe(standby.lock.instanceId);
    expect(leader.changes).toEqual([true, false]);
  });
});
