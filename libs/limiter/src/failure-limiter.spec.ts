import { createRedisClient, type RedisClient } from '@switchyard/messaging';
import { SpecRedis } from '@switchyard/testing';
import { FailureLimiter } from './failure-limiter.js';

describe('FailureLimiter (real Redis)', () => {
  const spec = new SpecRedis(createRedisClient);
  let redis: RedisClient;

  beforeAll(async () => {
    [redis] = (await spec.open(1)) as [RedisClient];
  });

  afterAll(() => spec.close());

  it('refuses once any count is over its limit, and a success gives its charge back', async () => {
    const limiter = new FailureLimiter(redis, 60);
    const counts = [
      { key: 'fl:user:1', max: 3 },
      { key: 'fl:address:a', max: 5 },
    ];
    const ok = await limiter.begin(counts);
    await ok!.succeeded();
    for (let i = 0; i < 3; i += 1) expect(await limiter.begin(counts)).not.toBeNull();
    expect(await limiter.begin(counts)).toBeNull();
    // Another user from the same address still has tries, until the address's count is
    // full: 4 charged there so far (the refused try counts too).
    const other = [
      { key: 'fl:user:2', max: 3 },
      { key: 'fl:address:a', max: 5 },
    ];
    expect(await limiter.begin(other)).not.toBeNull();
    expect(await limiter.begin(other)).toBeNull();
    expect(await redis.ttl('fl:user:1')).toBeGreaterThan(0);
  });

  it('lets through no more than the limit of tries sent at once', async () => {
    const limiter = new FailureLimiter(redis, 60);
    const counts = [{ key: 'fl:user:parallel', max: 10 }];
    const results = await Promise.all(Array.from({ length: 50 }, () => limiter.begin(counts)));
    expect(results.filter((r) => r !== null)).toHaveLength(10);
  });
});
