import {
  ROUTING_SNAPSHOT_KEY,
  type RoutingChange,
  type RoutingSnapshot,
} from '@switchyard/contracts';
import { createRedisClient, type EventBus, type RedisClient } from '@switchyard/messaging';
import { Registry } from '@switchyard/observability';
import { routedChannel } from '@switchyard/routing/testing';
import { clearRedisNamespace, testRedisPrefix, waitFor } from '@switchyard/testing';
import { RoutingState } from './routing-state.js';

// How the edge follows the router's changes (docs/architecture.md, "Routing snapshots and
// changes"), against the real Redis the router stores its snapshot in: a change that
// follows the version held is applied to it; one that does not makes the edge read the
// stored snapshot whole.

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const channel = (id: number, weight = 1) => routedChannel(id, { models: [`m${id}`], weight });

const change = (fields: Partial<RoutingChange> & Pick<RoutingChange, 'version'>) => ({
  baseVersion: fields.version - 1,
  generatedAt: Date.now(),
  changed: [],
  removed: [],
  resting: [],
  ...fields,
});

describe('RoutingState (real Redis)', () => {
  const prefix = testRedisPrefix();
  let redis: RedisClient;
  let state: RoutingState;
  let registry: Registry;

  const store = (snapshot: RoutingSnapshot) =>
    redis.set(ROUTING_SNAPSHOT_KEY, JSON.stringify(snapshot));
  const reads = async () =>
    (await registry.getSingleMetric('edge_routing_snapshot_reads_total')!.get()).values[0]!.value;

  beforeAll(async () => {
    redis = createRedisClient({ url, prefix });
    await new Promise((resolve) => redis.once('ready', resolve));
  });

  beforeEach(() => {
    registry = new Registry();
    // The bus is only asked at start-up, which these cases do not run.
    state = new RoutingState({} as EventBus, redis, registry);
    state.install({ version: 1, generatedAt: 0, channels: [channel(1), channel(2), channel(3)] });
  });

  afterAll(async () => {
    redis.disconnect();
    await clearRedisNamespace(url, prefix);
  });

  it('applies a change to the version it follows: changed channels replaced, new ones added, removed ones gone', async () => {
    state.apply(
      change({
        version: 2,
        changed: [channel(4), channel(2, 7)],
        removed: [1],
        resting: [{ id: 1, models: ['m1'], groups: ['default'] }],
      }),
    );
    const snapshot = state.table!.snapshot;
    expect(snapshot.version).toBe(2);
    expect(snapshot.channels.map((c) => [c.id, c.weight])).toEqual([
      [2, 7],
      [3, 1],
      [4, 1],
    ]);
    expect(snapshot.resting).toEqual([{ id: 1, models: ['m1'], groups: ['default'] }]);
    expect([...state.table!.candidates({ model: 'm1', group: 'default', now: 0 })]).toEqual([]);
    expect(state.table!.serves('m1', 'default')).toBe(true);
    expect(await reads()).toBe(0);
  });

  it('ignores a change it already holds', () => {
    state.apply(change({ version: 1, baseVersion: 0, removed: [1, 2, 3] }));
    expect(state.table!.snapshot.channels).toHaveLength(3);
  });

  it('reads the stored snapshot when a change does not follow the version held', async () => {
    // Version 2 was missed; the router stored version 3 before announcing it.
    await store({ version: 3, generatedAt: 0, channels: [channel(5)], resting: [] });
    state.apply(change({ version: 3, baseVersion: 2, changed: [channel(6)] }));
    await waitFor(() => state.table!.version === 3 || undefined, { what: 'version 3' });
    expect(state.table!.snapshot.channels.map((c) => c.id)).toEqual([5]);
    expect(await reads()).toBe(1);
  });

  it("reads the stored snapshot for a new leader's first change, which follows nothing an edge holds", async () => {
    await store({ version: 9, generatedAt: 0, channels: [channel(1), channel(9)], resting: [] });
    state.apply(change({ version: 9, baseVersion: 0 }));
    await waitFor(() => state.table!.version === 9 || undefined, { what: 'version 9' });
    expect(state.table!.snapshot.channels.map((c) => c.id)).toEqual([1, 9]);
  });

  it("reads the stored snapshot for a new leader's first change when it holds the version 0 a router answers before it leads", async () => {
    const starting = new RoutingState({} as EventBus, redis, new Registry());
    // A router that does not lead yet answers a snapshot of its own state, unpublished.
    starting.install({ version: 0, generatedAt: 0, channels: [], resting: [] });
    await store({ version: 1, generatedAt: 0, channels: [channel(7)], resting: [] });
    // Its first publish as leader follows nothing: it lists no channel as changed.
    starting.apply(change({ version: 1, baseVersion: 0 }));
    await waitFor(() => starting.table!.version === 1 || undefined, { what: 'version 1' });
    expect(starting.table!.snapshot.channels.map((c) => c.id)).toEqual([7]);
  });

  it('reads once more when a change arrives during a read, so the newest stored version wins', async () => {
    await store({ version: 5, generatedAt: 0, channels: [channel(5)], resting: [] });
    state.apply(change({ version: 5, baseVersion: 4 }));
    // Stored and announced while the first read is in flight.
    const stored = store({ version: 6, generatedAt: 0, channels: [channel(6)], resting: [] });
    state.apply(change({ version: 6, baseVersion: 5 }));
    await stored;
    await waitFor(() => state.table!.version === 6 || undefined, { what: 'version 6' });
    expect(state.table!.snapshot.channels.map((c) => c.id)).toEqual([6]);
    expect(await reads()).toBe(2);
  });
});
