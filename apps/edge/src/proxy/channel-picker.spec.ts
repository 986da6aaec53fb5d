import { type RoutedChannel, type RoutedKey } from '@switchyard/contracts';
import { createRedisClient, type RedisClient } from '@switchyard/messaging';
import { Registry } from '@switchyard/observability';
import { AccountLimiter } from '@switchyard/limiter';
import { RoutingTable } from '@switchyard/routing';
import { routedChannel, routedKey } from '@switchyard/routing/testing';
import { clearRedisNamespace, freePort, testRedisPrefix } from '@switchyard/testing';
import { ChannelPicker, type Exclusions, type PickRequest } from './channel-picker.js';

// The pick step against the real Redis: policy order, account limits checked in batches,
// the token's own rate once per request, and serving without limits when Redis is away.

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const key = routedKey;
const channel = (id: number, priority: number, keys: RoutedKey[]) =>
  routedChannel(id, { models: ['m'], priority, keys });

const table = (...channels: RoutedChannel[]) =>
  new RoutingTable({ version: 1, generatedAt: 0, channels });

const none = (): Exclusions => ({ channels: new Set(), keys: new Set() });

let requests = 0;
const request = (extra: Partial<PickRequest> = {}): PickRequest => ({
  requestId: `pick-${(requests += 1)}`,
  model: 'm',
  group: 'default',
  estimatedTokens: 10,
  tokenRate: undefined,
  ...extra,
});

describe('ChannelPicker (real Redis)', () => {
  const prefix = testRedisPrefix();
  let redis: RedisClient;
  let limiter: AccountLimiter;
  let picker: ChannelPicker;
  let registry: Registry;

  beforeAll(async () => {
    redis = createRedisClient({ url, prefix });
    // The client queues nothing while it connects: a command before then fails (open).
    await new Promise((resolve) => redis.once('ready', resolve));
    limiter = new AccountLimiter(redis);
    registry = new Registry();
    picker = new ChannelPicker(limiter, registry);
  });

  afterAll(async () => {
    redis.disconnect();
    await clearRedisNamespace(url, prefix);
  });

  it('takes the highest tier first, skipping what the request excluded', async () => {
    const routes = table(channel(1, 0, [key(10)]), channel(2, 5, [key(20)]));
    expect((await picker.pick(routes, request(), none()))?.candidate.channel.id).toBe(2);
    const excluded = none();
    excluded.channels.add(2);
    expect((await picker.pick(routes, request(), excluded))?.candidate.channel.id).toBe(1);
    excluded.channels.add(1);
    expect(await picker.pick(routes, request(), excluded)).toBeNull();
  });

  it('passes over accounts at their limit; a batch all full stays out for the request', async () => {
    const limited = channel(3, 9, [key(30, { concurrency: 1 })]);
    const holding = await picker.pick(table(limited), request(), none());
    expect(holding?.candidate.key.id).toBe(30);

    const withFallback = table(limited, channel(4, 0, [key(40)]));
    expect((await picker.pick(withFallback, request(), none()))?.candidate.key.id).toBe(40);
    const excluded = none();
    expect(await picker.pick(table(limited), request(), excluded)).toBeNull();
    expect([...excluded.keys]).toEqual([30]);

    holding!.lease.release(1);
    await limiter.flush();
    expect((await picker.pick(table(limited), request(), none()))?.candidate.key.id).toBe(30);
  });

  it("refuses the request when the token's own rate is spent", async () => {
    const routes = table(channel(5, 0, [key(50)]));
    const tokenRate = { id: 9_001, rateLimit: 1 };
    expect(await picker.pick(routes, request({ tokenRate }), none())).not.toBeNull();
    await expect(picker.pick(routes, request({ tokenRate }), none())).rejects.toMatchObject({
      code: 'rate_limit_exceeded',
    });
  });

  it("admits from this edge's allowance without Redis, yet keeps the policy's order", async () => {
    const admissions = async () => {
      const metric = await registry.getSingleMetric('edge_limit_admissions_total')!.get();
      const count = (path: string) => metric.values.find((v) => v.labels.path === path)?.value ?? 0;
      return { local: count('local'), redis: count('redis') };
    };
    const before = await admissions();
    const roomy = channel(7, 0, [key(71, { rpm: 16_000 })]);
    for (let i = 0; i < 20; i += 1)
      expect((await picker.pick(table(roomy), request(), none()))?.candidate.key.id).toBe(71);
    const after = await admissions();
    expect(after.local - before.local).toBeGreaterThan(10);
    expect(after.local + after.redis - before.local - before.redis).toBe(20);

    // A preferred account with room is still asked for first, though 71 could be had locally.
    const preferred = channel(8, 9, [key(80, { concurrency: 1 })]);
    const both = table(preferred, roomy);
    const holding = await picker.pick(both, request(), none());
    expect(holding?.candidate.key.id).toBe(80);
    expect((await picker.pick(both, request(), none()))?.candidate.key.id).toBe(71);
    holding!.lease.release(1);
    await limiter.flush();
    expect((await picker.pick(both, request(), none()))?.candidate.key.id).toBe(80);
  });

  it('serves the first candidate without its limits when Redis cannot be asked', async () => {
    const away = createRedisClient({ url: `redis://127.0.0.1:${await freePort()}`, prefix });
    try {
      const blind = new ChannelPicker(new AccountLimiter(away), new Registry());
      const routes = table(channel(6, 0, [key(60, { rpm: 1 })]));
      const first = await blind.pick(routes, request(), none());
      const second = await blind.pick(routes, request(), none());
      expect([first?.candidate.key.id, second?.candidate.key.id]).toEqual([60, 60]);
    } finally {
      away.disconnect();
    }
  });
});
