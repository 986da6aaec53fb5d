import { Events, type ChannelOutcome, type RoutingSnapshot } from '@switchyard/contracts';
import { ChannelStatus } from '@switchyard/db';
import { waitFor } from '@switchyard/testing';
import { RouterTestbed, type RunningRouter } from '../testing/router.fixture.js';

// Two real routers over one database and one Redis namespace, as in production: what the
// leader publishes for edges and when, what the standby does meanwhile, and the takeover.

const DEAD_UPSTREAM = 'http://127.0.0.1:9';

describe('RoutingAuthority (real Postgres and Redis, leader and standby)', () => {
  let testbed: RouterTestbed;
  let leader: RunningRouter;
  let standby: RunningRouter;
  /** Enabled, with two keys; the second one an administrator disabled. */
  let routed: { id: number; keys: number[] };
  /** Disabled by an administrator. */
  let disabled: { id: number; keys: number[] };
  /** Enabled, but its only key is disabled. */
  let keyless: { id: number; keys: number[] };

  const stored = async (): Promise<RoutingSnapshot> =>
    waitFor(() => testbed.storedSnapshot().then((s) => s ?? undefined), { what: 'a snapshot' });

  /** The next snapshot stored after `version` that satisfies `check`. */
  const nextSnapshot = (version: number, check: (s: RoutingSnapshot) => boolean = () => true) =>
    waitFor(
      async () => {
        const snapshot = await testbed.storedSnapshot();
        return snapshot && snapshot.version > version && check(snapshot) ? snapshot : undefined;
      },
      { what: `a snapshot after version ${version}` },
    );

  const routedIds = (snapshot: RoutingSnapshot) => snapshot.channels.map((c) => c.id);
  const restingIds = (snapshot: RoutingSnapshot) => (snapshot.resting ?? []).map((c) => c.id);
  const keysOf = (snapshot: RoutingSnapshot, channelId: number) =>
    snapshot.channels.find((c) => c.id === channelId)?.keys.map((k) => k.id);

  /** The routing.changed event that announced `version`. */
  const announcement = (version: number) =>
    waitFor(
      () => testbed.events(Events.RoutingChanged).find((e) => e.change.version === version)?.change,
      { what: `the routing.changed event of version ${version}` },
    );

  const report = (router: RunningRouter, outcomes: Omit<ChannelOutcome, 'latencyMs' | 'at'>[]) =>
    router.bus.publish(Events.ChannelOutcomes, {
      edgeId: 'edge-spec',
      outcomes: outcomes.map((o) => ({ latencyMs: 5, at: Date.now(), ...o })),
    });

  beforeAll(async () => {
    testbed = await RouterTestbed.open();
    routed = await testbed.addChannel({
      baseUrl: DEAD_UPSTREAM,
      secrets: ['sk-a-0001', 'sk-b-0002'],
    });
    await testbed.setKeyStatus(routed.keys[1]!, ChannelStatus.disabled);
    disabled = await testbed.addChannel({
      baseUrl: DEAD_UPSTREAM,
      secrets: ['sk-c-0003'],
      status: ChannelStatus.disabled,
    });
    keyless = await testbed.addChannel({ baseUrl: DEAD_UPSTREAM, secrets: ['sk-d-0004'] });
    await testbed.setKeyStatus(keyless.keys[0]!, ChannelStatus.disabled);
    leader = await testbed.startRouter();
    await waitFor(() => (leader.lock.isLeader ? true : undefined), { what: 'a leader' });
    standby = await testbed.startRouter();
  });

  afterAll(() => testbed.close());

  it('publishes, while leading, what edges may route: enabled channels with their enabled keys', async () => {
    const snapshot = await stored();
    expect(routedIds(snapshot)).toEqual([routed.id]);
    expect(keysOf(snapshot, routed.id)).toEqual([routed.keys[0]]);
    // A channel that cannot take traffic now rests (edges know its models exist); one an
    // administrator disabled is not there at all.
    expect(restingIds(snapshot)).toEqual([keyless.id]);
    expect([...routedIds(snapshot), ...restingIds(snapshot)]).not.toContain(disabled.id);
    // The secret stays sealed on its way to the edges.
    expect(JSON.stringify(snapshot)).not.toContain('sk-a-0001');
    await announcement(snapshot.version);
  });

  it('lets only the leader publish; the standby answers with the leader’s snapshot', async () => {
    expect([leader.lock.isLeader, standby.lock.isLeader]).toEqual([true, false]);
    const snapshot = await stored();
    await standby.authority.reload();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await stored()).version).toBe(snapshot.version);
    expect(await standby.authority.current()).toEqual(snapshot);
  });

  it('publishes a new version only when what edges should do changes', async () => {
    const before = await stored();
    await leader.authority.reload();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await stored()).version).toBe(before.version);

    await testbed.setKeyStatus(routed.keys[1]!, ChannelStatus.enabled);
    await leader.bus.publish(Events.ChannelChanged, { channelId: routed.id, action: 'updated' });
    const after = await nextSnapshot(before.version);
    expect(keysOf(after, routed.id)).toEqual(routed.keys);
    // Edges are sent the one channel that changed, after the version they hold.
    const change = await announcement(after.version);
    expect(change.baseVersion).toBe(before.version);
    expect(change.changed).toEqual(after.channels.filter((c) => c.id === routed.id));
    expect(change.removed).toEqual([]);
    expect(change.resting).toEqual(after.resting);
  });

  it('follows a channel announced as created, then as deleted, with a change of that channel alone', async () => {
    const before = await stored();
    const added = await testbed.addChannel({ baseUrl: DEAD_UPSTREAM, secrets: ['sk-e-0005'] });
    await leader.bus.publish(Events.ChannelChanged, { channelId: added.id, action: 'created' });
    const withIt = await nextSnapshot(before.version, (s) => routedIds(s).includes(added.id));
    expect(routedIds(withIt)).toEqual([routed.id, added.id]);
    expect(await announcement(withIt.version)).toMatchObject({
      changed: [expect.objectContaining({ id: added.id })],
      removed: [],
    });

    await testbed.channels.delete(testbed.prisma, added.id);
    await leader.bus.publish(Events.ChannelChanged, { channelId: added.id, action: 'deleted' });
    const without = await nextSnapshot(withIt.version);
    expect(routedIds(without)).toEqual([routed.id]);
    expect(await announcement(without.version)).toMatchObject({ changed: [], removed: [added.id] });
  });

  it('disables a key the upstream bans, drops it from the snapshot and announces the change', async () => {
    const before = await stored();
    const announced = testbed.events(Events.ChannelChanged).length;
    await report(leader, [
      { channelId: routed.id, keyId: routed.keys[1]!, kind: 'banned', httpStatus: 401 },
    ]);
    const after = await nextSnapshot(before.version, (s) => keysOf(s, routed.id)?.length === 1);
    expect(keysOf(after, routed.id)).toEqual([routed.keys[0]]);
    expect(await testbed.keyStatuses(routed.id)).toEqual([
      ChannelStatus.enabled,
      ChannelStatus.auto_disabled,
    ]);
    await waitFor(
      () =>
        testbed
          .events(Events.ChannelChanged)
          .slice(announced)
          .some((e) => e.channelId === routed.id)
          ? true
          : undefined,
      { what: 'the channel.changed announcement' },
    );
  });

  it('hands over to the standby, which publishes from the same state at once', async () => {
    const last = await stored();
    await testbed.stopRouter(leader);
    await waitFor(() => (standby.lock.isLeader ? true : undefined), { what: 'a takeover' });
    const first = await nextSnapshot(last.version);
    expect(routedIds(first)).toEqual(routedIds(last));
    expect(keysOf(first, routed.id)).toEqual(keysOf(last, routed.id));
    expect(await standby.authority.current()).toEqual(first);
    // A new leader has published nothing edges hold: they read its snapshot whole.
    expect(await announcement(first.version)).toMatchObject({ baseVersion: 0, changed: [] });
  });
  it('rests a channel whose breaker opens, and routes it again once a probe closes it', async () => {
    expect(standby.lock.isLeader).toBe(true);
    const before = await stored();
    const failure = { channelId: routed.id, keyId: routed.keys[0]!, kind: 'server_error' as const };
    await report(standby, [failure, failure, failure]);
    const resting = await nextSnapshot(before.version, (s) => restingIds(s).includes(routed.id));
    expect(routedIds(resting)).toEqual([]);
    expect(await announcement(resting.version)).toMatchObject({
      removed: [routed.id],
      changed: [],
      resting: resting.resting,
    });

    await standby.authority.recovered('channel', routed.id);
    const back = await nextSnapshot(resting.version);
    expect(routedIds(back)).toEqual([routed.id]);
  });

  it('stores a ban reported while no router leads, once one does', async () => {
    // The leader dies holding the lock: until it expires, no router may store anything.
    await testbed.stopRouter(standby);
    await testbed.redis.set('router:leader', 'a-router-that-died', 'PX', 3_000);
    const successor = await testbed.startRouter();
    expect(successor.lock.isLeader).toBe(false);
    await report(successor, [
      { channelId: routed.id, keyId: routed.keys[0]!, kind: 'banned', httpStatus: 401 },
    ]);
    await waitFor(
      async () =>
        (await testbed.keyStatuses(routed.id))[0] === ChannelStatus.auto_disabled
          ? true
          : undefined,
      { what: 'the ban stored by the router that took over' },
    );
    expect(successor.lock.isLeader).toBe(true);
  });
});
