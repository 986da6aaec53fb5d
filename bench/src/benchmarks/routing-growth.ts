import { generateGatewayToken, SecretCipher, sha256Hex } from '@switchyard/security';
import { query, startApp, waitFor, type AppProcess } from '@switchyard/testing';
import { Redis } from 'ioredis';
import { startDeployedEdge } from '../lib/deployed.js';
import { chatBody, edgesInTurns } from '../lib/edge-turns.js';
import { benchEnvironment, type BenchEnvironment } from '../lib/environment.js';
import { cpuSeconds, load, residentMemoryMiB } from '../lib/measure.js';
import { seedToken } from '../lib/seed.js';

// How the edge's cost grows with the routing state (docs/performance.md, "How cost grows"):
// 1, 10, 100 and 1,000 channels of 100 upstream keys each (100 to 100,000 keys), each case
// on a database, Redis namespace, router and edge of its own. The load's model is served by
// one channel (with limits: every request takes the Redis round trip), whose 100 keys are
// all accounts of the mock; every other channel serves a model of its own with keys the
// mock never sees. For each case:
// - the routing snapshot the router stores (its size) and the edge's resident memory once
//   it holds it;
// - the edge's CPU per request at 64 connections, against 1 channel;
// - a reload: one channel's weight is changed and `channel.changed` announced, as the admin
//   service does; the time until the router's change is on the bus and its size, the edge's
//   CPU for taking it in, and the longest the edge's event loop was held meanwhile (its
//   `eventloop_busy_max_seconds`, which each scrape starts anew), with no load and under a
//   load of 8 connections (the p99 of that load is printed too).
// Then the smallest and the largest case, still up, take turns under the same load
// (lib/edge-turns.ts): their edges' CPU per request side by side, to a precision one window
// after another cannot give on this machine.
// The mock and the load share CPU 0; the edge, router and metering worker CPU 1.
//
//   node bench/dist/benchmarks/routing-growth.js     (BENCH_SECONDS per load, default 5)

const LOAD_CPU = '0';
const GATEWAY_CPU = '1';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CHANNELS = (process.env.BENCH_CHANNELS ?? '1,10,100,1000').split(',').map(Number);
const KEYS_PER_CHANNEL = 100;
/** What the comparisons of edges send (lib/edge-turns.ts): `gpt-4o`, a few words. */
const MODEL = 'gpt-4o';
const BODY = chatBody(false);
const UPSTREAM_KEYS = Array.from({ length: KEYS_PER_CHANNEL }, (_, i) => `sk-bench-${i}`);
/** One token value in every case's database, so that one load can go to any case's edge. */
const TOKEN = generateGatewayToken();
const TURNS = { rounds: 6, seconds: 3 };

interface CaseResult {
  channels: number;
  keys: number;
  snapshotBytes: number;
  edgeRssMiB: number;
  rps: number;
  edgeUsPerRequest: number;
  reloads: Reload[];
}

interface Reload {
  /** From the announcement until the router's change is on the bus. */
  publishedMs: number;
  /** The change's size on the bus. */
  changeBytes: number;
  /** The edge's CPU over the window that took the snapshot in (its idle cost subtracted). */
  edgeCpuMs: number;
  /** The longest the edge's event loop was held in that window. */
  edgeBusyMaxMs: number;
  /** Under load only: the load's p99. */
  loadP99Ms?: number;
}

/** Channels 1..n: the first serves MODEL with the mock's accounts, the others a model each. */
async function seedChannels(bench: BenchEnvironment, count: number, mockUrl: string) {
  const cipher = new SecretCipher([bench.secretKeys]);
  const ids = await query<{ id: number }>(
    bench.databaseUrl,
    `INSERT INTO "Channel" (name, kind, "baseUrl", models, provider, "rpmLimit", "tpmLimit",
                            "concurrencyLimit", "updatedAt")
     SELECT 'bench-' || g, 'single', $1,
            CASE WHEN g = 1 THEN ARRAY[$2] ELSE ARRAY['model-' || g] END, 'openai',
            100000000, 2000000000, 100000, now()
     FROM generate_series(1, $3::int) g ORDER BY g RETURNING id`,
    [mockUrl, MODEL, count],
  );
  const channelIds: number[] = [];
  const secrets: string[] = [];
  for (const [index, { id }] of ids.entries()) {
    for (let k = 0; k < KEYS_PER_CHANNEL; k += 1) {
      channelIds.push(id);
      secrets.push(index === 0 ? UPSTREAM_KEYS[k]! : `sk-bench-channel-${id}-key-${k}`);
    }
  }
  await query(
    bench.databaseUrl,
    `INSERT INTO "ChannelKey" ("channelId", "secretCiphertext", fingerprint, "lastFour")
     SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[])`,
    [
      channelIds,
      secrets.map((secret) => cipher.seal(secret)),
      secrets.map((secret) => sha256Hex(secret)),
      secrets.map((secret) => secret.slice(-4)),
    ],
  );
  return ids.map((row) => row.id);
}

/** The edge's metrics text; reading it starts a new span of `eventloop_busy_max_seconds`. */
async function edgeMetrics(edge: AppProcess): Promise<string> {
  return (await fetch(`${edge.opsUrl}/metrics`)).text();
}

function metric(text: string, name: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in the edge's metrics`);
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

/** Listens for the router's changes on the bus; resolves the next one's size in bytes. */
async function changeListener(bench: BenchEnvironment) {
  const subscriber = new Redis(bench.redisUrl);
  let waiting: ((bytes: number) => void) | undefined;
  await subscriber.subscribe(`${bench.prefix}:routing.changed`);
  subscriber.on('messageBuffer', (_channel: Buffer, message: Buffer) => waiting?.(message.length));
  return {
    next: () => new Promise<number>((resolve) => (waiting = resolve)),
    close: () => subscriber.quit(),
  };
}

/** A case's own database, Redis namespace, router, metering worker and edge, routing. */
async function startCase(count: number, mockUrl: string) {
  const bench = await benchEnvironment();
  const apps: AppProcess[] = [];
  const bus = new Redis(bench.redisUrl);
  const changes = await changeListener(bench);
  const stop = async () => {
    await Promise.all(apps.map((app) => app.stop()));
    await Promise.all([changes.close(), bus.quit()]);
    await bench.remove();
  };
  try {
    const channelIds = await seedChannels(bench, count, mockUrl);
    const token = await seedToken(bench.databaseUrl, {
      name: 'limited',
      secret: TOKEN,
      limits: { quota: 1_000_000_000_000, rateLimit: 100_000_000 },
    });
    const first = changes.next();
    const router = await startApp('router', { env: bench.env, cpus: GATEWAY_CPU });
    apps.push(router);
    await first;
    apps.push(await startApp('metering', { env: bench.env, cpus: GATEWAY_CPU }));
    const edge = await startDeployedEdge(bench.env, GATEWAY_CPU);
    apps.push(edge);
    const url = `${edge.url}/v1/chat/completions`;
    await waitFor(
      async () => {
        const response = await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: BODY,
        });
        await response.arrayBuffer();
        return response.status === 200 || undefined;
      },
      { timeoutMs: 60_000, what: `the edge routing with ${count} channels` },
    );
    // Read once the edge routes: a router's first snapshot may come before its channels.
    const snapshotBytes = await bus.strlen(`${bench.prefix}:routing:snapshot`);
    return { count, bench, bus, changes, channelIds, edge, token, snapshotBytes, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

type Case = Awaited<ReturnType<typeof startCase>>;

async function measureCase(started: Case): Promise<CaseResult> {
  const { count, bench, bus, changes, channelIds, edge, token, snapshotBytes } = started;
  const url = `${edge.url}/v1/chat/completions`;
  const request = {
    url,
    authorization: `Bearer ${token}`,
    body: BODY,
    cpus: LOAD_CPU,
  };
  await load({ ...request, connections: 64, seconds: 2 });
  const pid = edge.child.pid!;
  const before = await cpuSeconds(pid);
  const measured = await load({ ...request, connections: 64, seconds: SECONDS });
  const edgeUsPerRequest = (((await cpuSeconds(pid)) - before) / measured.requests) * 1e6;
  if (measured.errors > 0) throw new Error(`${measured.errors} requests failed`);
  const edgeRssMiB = await residentMemoryMiB(pid);

  // Each reload changes the last channel's weight (with one channel, the load's own).
  const changed = channelIds.at(-1)!;
  let weight = 1;
  const reload = async (underLoad: boolean): Promise<Reload> => {
    weight += 1;
    await query(bench.databaseUrl, `UPDATE "Channel" SET weight = $1 WHERE id = $2`, [
      weight,
      changed,
    ]);
    // An idle second first: its CPU is what the window costs without a reload.
    await edgeMetrics(edge);
    const idleFrom = await cpuSeconds(pid);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const idleCpu = (await cpuSeconds(pid)) - idleFrom;
    const loadDone = underLoad
      ? load({ ...request, connections: 8, seconds: 3 })
      : Promise.resolve(undefined);
    if (underLoad) await new Promise((resolve) => setTimeout(resolve, 1_000));
    await edgeMetrics(edge);
    const version = metric(await edgeMetrics(edge), 'edge_routing_snapshot_version');
    const cpuFrom = await cpuSeconds(pid);
    const published = changes.next();
    const announcedAt = performance.now();
    await bus.publish(
      `${bench.prefix}:channel.changed`,
      JSON.stringify({
        pattern: `${bench.prefix}:channel.changed`,
        data: { channelId: changed, action: 'updated' },
      }),
    );
    const changeBytes = await published;
    const publishedMs = performance.now() - announcedAt;
    // The edge takes it in well within a second; the window is the same with or without.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const text = await edgeMetrics(edge);
    const edgeCpu = (await cpuSeconds(pid)) - cpuFrom;
    if (metric(text, 'edge_routing_snapshot_version') <= version)
      throw new Error('the edge did not take the new snapshot in');
    const loaded = await loadDone;
    return {
      publishedMs,
      changeBytes,
      edgeCpuMs: underLoad
        ? Number.NaN
        : Math.max(0, (edgeCpu - idleCpu * ((publishedMs + 1_000) / 1_000)) * 1e3),
      edgeBusyMaxMs: metric(text, 'eventloop_busy_max_seconds') * 1e3,
      ...(loaded ? { loadP99Ms: loaded.p99Ms } : {}),
    };
  };
  const reloads = [await reload(false), await reload(false), await reload(true)];
  return {
    channels: count,
    keys: count * KEYS_PER_CHANNEL,
    snapshotBytes,
    edgeRssMiB,
    rps: measured.rps,
    edgeUsPerRequest,
    reloads,
  };
}

async function main(): Promise<void> {
  const mock = await startApp('mock-upstream', {
    env: { MOCK_ACCOUNTS: UPSTREAM_KEYS.join(','), LOG_LEVEL: 'warn' },
    cpus: LOAD_CPU,
  });
  try {
    const results: CaseResult[] = [];
    // The smallest and the largest case stay up, to be compared side by side at the end.
    const kept: Case[] = [];
    try {
      for (const count of CHANNELS) {
        const started = await startCase(count, mock.url);
        const keep = count === CHANNELS[0] || count === CHANNELS.at(-1);
        if (keep) kept.push(started);
        try {
          results.push(await measureCase(started));
        } finally {
          if (!keep) await started.stop();
        }
        process.stdout.write(`${JSON.stringify(results.at(-1))}\n`);
      }
      // One window at a time can differ by a fifth from the next on this machine: the
      // two edges take turns under the same load, so what differs between them is theirs.
      if (kept.length === 2) {
        await edgesInTurns({
          edges: Object.fromEntries(kept.map((c) => [`${c.count} channels`, c.edge])),
          label: 'routing state',
          token: TOKEN,
          stream: false,
          connections: 64,
          loadCpus: LOAD_CPU,
          ...TURNS,
        });
      }
    } finally {
      for (const started of kept) await started.stop();
    }
    const smallest = results[0]!;
    const ms = (value: number) => (Number.isNaN(value) ? '-' : value.toFixed(1));
    process.stdout.write(
      [
        `growth with the routing state (${KEYS_PER_CHANNEL} keys a channel; 64 connections, ${SECONDS} s; reloads: two idle, one under 8 connections)`,
        'channels    keys  snapshot MiB  change KiB  edge RSS MiB    req/s  edge µs/req  vs 1 channel  published ms  edge reload CPU ms  edge held ms (idle, idle, loaded)  loaded p99 ms',
        ...results.map((r) => {
          const [a, b, loaded] = r.reloads;
          return [
            String(r.channels).padEnd(8),
            String(r.keys).padStart(7),
            (r.snapshotBytes / 2 ** 20).toFixed(2).padStart(13),
            (a!.changeBytes / 2 ** 10).toFixed(1).padStart(11),
            r.edgeRssMiB.toFixed(0).padStart(13),
            r.rps.toFixed(0).padStart(8),
            r.edgeUsPerRequest.toFixed(0).padStart(12),
            `${(r.edgeUsPerRequest / smallest.edgeUsPerRequest).toFixed(2)}x`.padStart(13),
            `${ms(a!.publishedMs)}, ${ms(b!.publishedMs)}, ${ms(loaded!.publishedMs)}`.padStart(14),
            `${ms(a!.edgeCpuMs)}, ${ms(b!.edgeCpuMs)}`.padStart(19),
            `${ms(a!.edgeBusyMaxMs)}, ${ms(b!.edgeBusyMaxMs)}, ${ms(loaded!.edgeBusyMaxMs)}`.padStart(
              34,
            ),
            ms(loaded!.loadP99Ms ?? Number.NaN).padStart(14),
          ].join(' ');
        }),
      ].join('\n') + '\n',
    );
  } finally {
    await mock.stop();
  }
}

await main();
