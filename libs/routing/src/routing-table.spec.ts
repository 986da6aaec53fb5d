import type { RoutedChannel, RoutingSnapshot } from '@switchyard/contracts';
import { RoutingTable, inRandomOrder, weightedOrder } from './routing-table.js';
import { routedChannel as channel, routedKey } from './testing.js';

const key = (id: number, coolingUntil: number | null = null) => routedKey(id, { coolingUntil });

function table(...channels: RoutedChannel[]): RoutingTable {
  const snapshot: RoutingSnapshot = { version: 1, generatedAt: 0, channels };
  return new RoutingTable(snapshot);
}

const query = { model: 'gpt-4o', group: 'default', now: 1_000 };

describe('RoutingTable', () => {
  it('tries the highest priority tier first, lower tiers after', () => {
    const order = [
      ...table(
        channel(1, { priority: 0 }),
        channel(2, { priority: 10 }),
        channel(3, { priority: 5 }),
      ).candidates(query),
    ];
    expect(order.map((c) => c.channel.id)).toEqual([2, 3, 1]);
  });

  it('serves only channels of the token group that list the model, exactly or by prefix', () => {
    const routes = table(
      channel(1, { models: ['gpt-4o-mini'] }),
      channel(2, { groups: ['vip'] }),
      channel(3, { models: ['gpt-4-gizmo-*'] }),
      channel(4, { models: ['*-all'], groups: ['vip'] }),
    );
    expect(
      [...routes.candidates({ ...query, model: 'gpt-4-gizmo-g-abc' })].map((c) => c.channel.id),
    ).toEqual([3]);
    expect([...routes.candidates({ ...query, group: 'vip' })].map((c) => c.channel.id)).toEqual([
      2,
    ]);
    expect([...routes.candidates(query)]).toEqual([]);
    expect(routes.serves('gpt-4o', 'vip')).toBe(true);
    expect(routes.serves('gpt-4o', 'default')).toBe(false);
    expect(routes.modelsFor('default')).toEqual(['gpt-4o-mini']);
  });

  it('knows the models of resting channels, which take no traffic', () => {
    const snapshot: RoutingSnapshot = {
      version: 1,
      generatedAt: 0,
      channels: [channel(1)],
      resting: [
        { id: 2, models: ['claude-3'], groups: ['default'] },
        { id: 3, models: ['*-all'], groups: ['vip'] },
      ],
    };
    const routes = new RoutingTable(snapshot);
    expect(routes.serves('claude-3', 'default')).toBe(true);
    expect([...routes.candidates({ ...query, model: 'claude-3' })]).toEqual([]);
    expect(routes.serves('gpt-4-all', 'vip')).toBe(true);
    expect(routes.serves('gpt-4-all', 'default')).toBe(false);
    expect(routes.serves('claude-3', 'vip')).toBe(false);
  });

  it('serves reverse-engineered `-all` models with a leading-`*` entry', () => {
    const routes = table(channel(4, { models: ['*-all'] }));
    expect(
      [...routes.candidates({ ...query, model: 'gpt-4o-all' })].map((c) => c.channel.id),
    ).toEqual([4]);
    expect([...routes.candidates({ ...query, model: 'gpt-4o' })]).toEqual([]);
  });

  it('maps the model name for the channel that renames it', () => {
    const [candidate] = table(
      channel(1, { modelMapping: { 'gpt-4o': 'gpt-4o-2024-08-06' } }),
    ).candidates(query);
    expect(candidate?.upstreamModel).toBe('gpt-4o-2024-08-06');
  });

  it("lists the names the group's channels send upstream for a model, once each", () => {
    const routes = table(
      channel(1, { modelMapping: { 'gpt-4o': 'gpt-4o-2024-08-06' } }),
      channel(2),
      channel(3),
      channel(4, { groups: ['vip'], modelMapping: { 'gpt-4o': 'vip-4o' } }),
    );
    expect(routes.upstreamModels('gpt-4o', 'default').sort()).toEqual([
      'gpt-4o',
      'gpt-4o-2024-08-06',
    ]);
    expect(routes.upstreamModels('gpt-4o', 'vip')).toEqual(['vip-4o']);
    expect(routes.upstreamModels('other', 'default')).toEqual([]);
  });

  it('skips excluded channels and keys and accounts that are cooling down', () => {
    const routes = table(
      channel(1, { priority: 1, keys: [key(11), key(12, 5_000), key(13, 500)] }),
      channel(2),
    );
    const ids = [...routes.candidates({ ...query, excludedKeys: new Set([11]) })].map(
      (c) => c.key.id,
    );
    expect(ids).toEqual([13, 20]);
    expect(
      [...routes.candidates({ ...query, excludedChannels: new Set([1]) })].map((c) => c.key.id),
    ).toEqual([20]);
  });

  it('spreads the first pick over a tier in proportion to the weights', () => {
    const routes = table(
      channel(1, { weight: 1 }),
      channel(2, { weight: 3 }),
      channel(3, { weight: 6 }),
    );
    const firsts = new Map<number, number>();
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const draws = 20_000;
    for (let i = 0; i < draws; i += 1) {
      const first = routes.candidates({ ...query, random }).next().value!;
      firsts.set(first.channel.id, (firsts.get(first.channel.id) ?? 0) + 1);
    }
    expect(firsts.get(1)! / draws).toBeCloseTo(0.1, 1);
    expect(firsts.get(2)! / draws).toBeCloseTo(0.3, 1);
    expect(firsts.get(3)! / draws).toBeCloseTo(0.6, 1);
  });

  it('lets a weight of 0 serve only after every weighted channel', () => {
    const ordered = weightedOrder([{ weight: 0 }, { weight: 1 }, { weight: 2 }], Math.random);
    expect(ordered[2]).toEqual({ weight: 0 });
  });

  it('offers every account of an aggregated channel', () => {
    const pool = channel(1, { kind: 'aggregated', keys: [key(11), key(12), key(13)] });
    expect([...table(pool).candidates(query)].map((c) => c.key.id).sort()).toEqual([11, 12, 13]);
  });

  it('offers the accounts of a pool in a uniformly random order', () => {
    const pool = table(channel(1, { keys: [key(11), key(12), key(13), key(14)] }));
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const orders = new Map<string, number>();
    const draws = 24_000;
    for (let i = 0; i < draws; i += 1) {
      const order = [...pool.candidates({ ...query, random })].map((c) => c.key.id).join();
      orders.set(order, (orders.get(order) ?? 0) + 1);
    }
    // All 24 orders of four accounts, each within 15 % of a 24th of the draws (a shuffle
    // that swaps with any position, not only those after, is off by up to 60 %).
    expect(orders.size).toBe(24);
    for (const count of orders.values()) {
      expect(count).toBeGreaterThan((0.85 * draws) / 24);
      expect(count).toBeLessThan((1.15 * draws) / 24);
    }
  });

  it('draws only the accounts a request takes, however large the pool', () => {
    const size = 100_000;
    const keys = Array.from({ length: size }, (_, i) => key(i + 1));
    const pool = table(channel(1, { kind: 'aggregated', keys }));
    let draws = 0;
    const random = () => {
      draws += 1;
      return Math.random();
    };
    const candidates = pool.candidates({ ...query, random });
    candidates.next();
    candidates.next();
    candidates.next();
    expect(draws).toBe(3);
    // Drawn to the end, the order is every account once.
    const ids = new Set([...pool.candidates(query)].map((c) => c.key.id));
    expect(ids.size).toBe(size);
  });

  it('draws nothing from a pool whose every account is cooling down', () => {
    const cooling = channel(1, { priority: 1, keys: [key(11, 5_000), key(12, 9_000)] });
    let draws = 0;
    const random = () => {
      draws += 1;
      return Math.random();
    };
    const ids = [...table(cooling, channel(2)).candidates({ ...query, random })].map(
      (c) => c.key.id,
    );
    expect(ids).toEqual([20]);
    expect(draws).toBe(0);
  });

  it('draws a random order one item at a time, each item once', () => {
    const items = Array.from({ length: 50 }, (_, i) => i);
    const order = [...inRandomOrder(items, Math.random)];
    expect([...order].sort((a, b) => a - b)).toEqual(items);
    expect(order).not.toEqual(items);
    expect([...inRandomOrder([], Math.random)]).toEqual([]);
  });

  it('keeps what the patterns matched for a name, and stays right past the names it keeps', () => {
    const routes = table(
      channel(1, { models: ['gpt-4o', 'gpt-4*'] }),
      channel(2, { models: ['gpt-4*'] }),
      channel(3, { models: ['*-all'] }),
      channel(4, { models: ['claude-*'], groups: ['vip'] }),
    );
    const ids = (model: string, group = 'default') =>
      [...routes.candidates({ ...query, model, group })].map((c) => c.channel.id).sort();
    expect(ids('gpt-4o')).toEqual([1, 2]);
    expect(ids('gpt-4o')).toEqual([1, 2]);
    expect(ids('gpt-4-all')).toEqual([1, 2, 3]);
    expect(ids('claude-3')).toEqual([]);
    expect(ids('claude-3', 'vip')).toEqual([4]);
    // More names than a table keeps: what it dropped is found again.
    for (let i = 0; i < 5_000; i += 1) expect(ids(`model-${i}-all`)).toEqual([3]);
    expect(ids('gpt-4o')).toEqual([1, 2]);
    // A name no model has (a megabyte of it) is matched, not kept.
    const huge = `${'x'.repeat(1_000_000)}-all`;
    expect(ids(huge)).toEqual([3]);
    expect(ids(huge)).toEqual([3]);
    expect(routes.upstreamModels('gpt-4-all', 'default')).toEqual(['gpt-4-all']);
    expect(routes.serves('claude-3', 'vip')).toBe(true);
  });
});
