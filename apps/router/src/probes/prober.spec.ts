import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { Events, type RoutingSnapshot } from '@switchyard/contracts';
import { ChannelStatus } from '@switchyard/db';
import { waitFor } from '@switchyard/testing';
import { RouterTestbed, type RunningRouter } from '../testing/router.fixture.js';

// The leader's probes against a real HTTP upstream: what was taken out automatically goes
// back into rotation when the upstream answers it well, stays out while it does not, and
// what an administrator disabled is never probed.

interface Probe {
  method: string;
  path: string;
  secret: string;
  body: { model?: string; max_tokens?: number };
}

/** Answers by the key: `sk-banned-…` 401, `sk-broken-…` 500 until healed, others 200. */
class Upstream {
  readonly probes: Probe[] = [];
  healed = false;
  url = '';
  private readonly server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const secret = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      this.probes.push({
        method: request.method ?? '',
        path: request.url ?? '',
        secret,
        body: body ? (JSON.parse(body) as Probe['body']) : {},
      });
      const status = secret.startsWith('sk-banned')
        ? 401
        : secret.startsWith('sk-broken') && !this.healed
          ? 500
          : 200;
      response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });

  async start(): Promise<void> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  probesOf(secret: string): Probe[] {
    return this.probes.filter((probe) => probe.secret === secret);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const PROBE_INTERVAL_MS = 200;

describe('Prober (real upstream server, real Postgres and Redis)', () => {
  const upstream = new Upstream();
  let testbed: RouterTestbed;
  let router: RunningRouter;
  /** Both keys taken out automatically; one healthy again, one still refused. */
  let banned: { id: number; keys: number[] };
  /** Its key taken out automatically, but the channel disabled by an administrator. */
  let adminChannel: { id: number; keys: number[] };
  /** One key taken out automatically, one disabled by an administrator. */
  let adminKey: { id: number; keys: number[] };

  const snapshotWhere = (check: (s: RoutingSnapshot) => boolean, what: string) =>
    waitFor(
      async () => {
        const snapshot = await testbed.storedSnapshot();
        return snapshot && check(snapshot) ? snapshot : undefined;
      },
      { what: what },
    );
  const isResting = (channelId: number) => (s: RoutingSnapshot) =>
    (s.resting ?? []).some((c) => c.id === channelId);

  beforeAll(async () => {
    await upstream.start();
    testbed = await RouterTestbed.open();
    banned = await testbed.addChannel({
      baseUrl: upstream.url,
      secrets: ['sk-healthy-1111', 'sk-banned-2222'],
      models: ['gpt-*', 'gpt-4o'],
      modelMapping: { 'gpt-4o': 'gpt-4o-2024-08-06' },
    });
    adminChannel = await testbed.addChannel({
      baseUrl: upstream.url,
      secrets: ['sk-healthy-off-channel'],
      status: ChannelStatus.disabled,
    });
    adminKey = await testbed.addChannel({
      baseUrl: upstream.url,
      secrets: ['sk-healthy-auto', 'sk-healthy-off-key'],
    });
    for (const key of [...banned.keys, adminChannel.keys[0]!, adminKey.keys[0]!]) {
      await testbed.setKeyStatus(key, ChannelStatus.auto_disabled);
    }
    await testbed.setKeyStatus(adminKey.keys[1]!, ChannelStatus.disabled);
    router = await testbed.startRouter({ PROBE_INTERVAL_MS: String(PROBE_INTERVAL_MS) });
    await waitFor(() => (router.lock.isLeader ? true : undefined), { what: 'a leader' });
  });

  afterAll(async () => {
    await testbed.close();
    await upstream.stop();
  });

  it('re-enables a key the upstream answers again, with one small real request', async () => {
    await waitFor(
      async () => ((await testbed.keyStatuses(banned.id))[0] === 'enabled' ? true : undefined),
      { what: 'the healthy key re-enabled' },
    );
    expect(upstream.probesOf('sk-healthy-1111')[0]).toEqual({
      method: 'POST',
      path: '/v1/chat/completions',
      secret: 'sk-healthy-1111',
      body: expect.objectContaining({ model: 'gpt-4o-2024-08-06', max_tokens: 1 }),
    });
    const snapshot = await snapshotWhere(
      (s) => s.channels.some((c) => c.id === banned.id),
      'the key back in the snapshot',
    );
    expect(snapshot.channels.find((c) => c.id === banned.id)?.keys.map((k) => k.id)).toEqual([
      banned.keys[0],
    ]);
  });

  it('keeps out a key the upstream still refuses, probing it again each round', async () => {
    await waitFor(() => (upstream.probesOf('sk-banned-2222').length >= 3 ? true : undefined), {
      what: 'three probes of the refused key',
    });
    expect((await testbed.keyStatuses(banned.id))[1]).toBe(ChannelStatus.auto_disabled);
  });

  it('never probes what an administrator disabled', async () => {
    await waitFor(
      async () => ((await testbed.keyStatuses(adminKey.id))[0] === 'enabled' ? true : undefined),
      { what: 'the automatically disabled key beside it re-enabled' },
    );
    await waitFor(() => (upstream.probesOf('sk-banned-2222').length >= 5 ? true : undefined), {
      what: 'more rounds',
    });
    expect(upstream.probesOf('sk-healthy-off-key')).toEqual([]);
    expect(upstream.probesOf('sk-healthy-off-channel')).toEqual([]);
    expect(await testbed.keyStatuses(adminChannel.id)).toEqual([ChannelStatus.auto_disabled]);
    expect((await testbed.keyStatuses(adminKey.id))[1]).toBe(ChannelStatus.disabled);
  });

  it('closes an open breaker only once a probe is answered well', async () => {
    const broken = await testbed.addChannel({ baseUrl: upstream.url, secrets: ['sk-broken-3333'] });
    await router.bus.publish(Events.ChannelChanged, { channelId: broken.id, action: 'created' });
    await snapshotWhere((s) => s.channels.some((c) => c.id === broken.id), 'the new channel');
    const failure = {
      channelId: broken.id,
      keyId: broken.keys[0]!,
      kind: 'server_error' as const,
      latencyMs: 5,
    };
    await router.bus.publish(Events.ChannelOutcomes, {
      edgeId: 'edge-spec',
      outcomes: [1, 2, 3].map(() => ({ ...failure, at: Date.now() })),
    });
    await snapshotWhere(isResting(broken.id), 'the breaker open');

    await waitFor(() => (upstream.probesOf('sk-broken-3333').length >= 2 ? true : undefined), {
      what: 'probes of the failing channel',
    });
    expect(isResting(broken.id)((await testbed.storedSnapshot())!)).toBe(true);

    upstream.healed = true;
    await snapshotWhere(
      (s) => s.channels.some((c) => c.id === broken.id),
      'the channel routed again',
    );
    // Closing a breaker changes no key: the key was never disabled.
    expect(await testbed.keyStatuses(broken.id)).toEqual([ChannelStatus.enabled]);
  });
});
