import {
  generateGatewayToken,
  generateSecretKeySpec,
  lastFour,
  SecretCipher,
  sha256Hex,
} from '@switchyard/security';
import {
  clearRedisNamespace,
  createTestDatabase,
  eventually,
  query,
  startApp,
  testRedisPrefix,
  type AppProcess,
} from '@switchyard/testing';
import {
  cpuSeconds,
  load,
  peakMemoryMiB,
  timeToFirstToken,
  type LoadResult,
} from '../lib/measure.js';

// The gateway's overhead: the same requests sent straight to a zero-latency upstream and
// through the edge, side by side in one run. The load generator and the upstream share
// CPU 0; the edge has CPU 1 to itself, so its CPU time per request is its own. Auth,
// routing, account limits (checked in Redis on every request) and usage hand-off are all
// on, as in production.

const LOAD_CPU = '0';
const EDGE_CPU = '1';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

interface GatewayRow {
  target: 'direct' | 'edge';
  kind: 'json' | 'stream';
  connections: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  ttftP50Ms: number | null;
  ttftP99Ms: number | null;
  errors: number;
  edgeCpuMicrosPerRequest: number | null;
}

interface GatewayReport {
  rows: GatewayRow[];
  edgePeakMemoryMiB: number;
}

const UPSTREAM_KEY = 'sk-bench-upstream';

function bodyOf(kind: 'json' | 'stream'): string {
  return JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Say something short about benchmarks.' }],
    ...(kind === 'stream' ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}

async function benchGateway(log: (line: string) => void): Promise<GatewayReport> {
  const database = await createTestDatabase();
  const prefix = testRedisPrefix();
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const secretKeys = generateSecretKeySpec('bench');
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: prefix,
    SECRET_KEYS: secretKeys,
    LOG_LEVEL: 'info',
  };
  const apps: AppProcess[] = [];
  try {
    const mock = await startApp('mock-upstream', {
      env: { ...env, MOCK_ACCOUNTS: UPSTREAM_KEY },
      cpus: LOAD_CPU,
    });
    apps.push(mock);

    // Limits far above the load, so every request takes the Redis round trip without being refused.
    const cipher = new SecretCipher([secretKeys]);
    const [channel] = await query<{ id: number }>(
      database.url,
      `INSERT INTO "Channel" (name, kind, "baseUrl", models, "rpmLimit", "tpmLimit", "concurrencyLimit", "updatedAt")
       VALUES ('bench', 'single', $1, '{gpt-4o-mini}', 100000000, 2000000000, 100000, now()) RETURNING id`,
      [mock.url],
    );
    await query(
      database.url,
      `INSERT INTO "ChannelKey" ("channelId", "secretCiphertext", fingerprint, "lastFour") VALUES ($1, $2, $3, $4)`,
      [channel!.id, cipher.seal(UPSTREAM_KEY), sha256Hex(UPSTREAM_KEY), lastFour(UPSTREAM_KEY)],
    );
    const token = generateGatewayToken();
    await query(
      database.url,
      `INSERT INTO "Token" (name, "keyHash", "lastFour", quota, "rateLimit", "updatedAt") VALUES ('bench', $1, $2, 1000000000000, 100000000, now())`,
      [sha256Hex(token), lastFour(token)],
    );

    apps.push(await startApp('router', { env, cpus: LOAD_CPU }));
    const metering = await startApp('metering', { env, cpus: LOAD_CPU }).catch(() => null);
    if (metering) apps.push(metering);
    else log('(metering worker not available: usage jobs accumulate in Redis during the run)');
    const edge = await startApp('edge', { env, cpus: EDGE_CPU, readyPath: '/readyz' });
    apps.push(edge);
    await eventually(
      async () =>
        (await fetch(`${edge.url}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).ok
          ? true
          : undefined,
      10_000,
      'edge routing',
    );

    const targets = {
      direct: { url: `${mock.url}/v1/chat/completions`, authorization: `Bearer ${UPSTREAM_KEY}` },
      edge: { url: `${edge.url}/v1/chat/completions`, authorization: `Bearer ${token}` },
    } as const;

    const rows: GatewayRow[] = [];
    for (const kind of ['json', 'stream'] as const) {
      for (const connections of [1, 64]) {
        for (const target of ['direct', 'edge'] as const) {
          const request = { ...targets[target], body: bodyOf(kind), connections };
          // Warm up connection pools, JIT and caches before measuring.
          await load({ ...request, seconds: 2, cpus: LOAD_CPU });
          const cpuBefore = await cpuSeconds(edge.child.pid!);
          const result: LoadResult = await load({ ...request, seconds: SECONDS, cpus: LOAD_CPU });
          const cpuUsed = (await cpuSeconds(edge.child.pid!)) - cpuBefore;
          const ttft =
            kind === 'stream'
              ? await timeToFirstToken({ ...request, seconds: Math.max(3, SECONDS / 2) })
              : null;
          const row: GatewayRow = {
            target,
            kind,
            connections,
            rps: result.rps,
            p50Ms: result.p50Ms,
            p99Ms: result.p99Ms,
            ttftP50Ms: ttft?.p50Ms ?? null,
            ttftP99Ms: ttft?.p99Ms ?? null,
            errors: result.errors,
            edgeCpuMicrosPerRequest: target === 'edge' ? (cpuUsed / result.requests) * 1e6 : null,
          };
          rows.push(row);
          log(formatRow(row));
        }
      }
    }
    const edgePeakMemoryMiB = await peakMemoryMiB(edge.child.pid!);
    return { rows, edgePeakMemoryMiB };
  } finally {
    await Promise.all(apps.map((app) => app.stop()));
    await clearRedisNamespace(redisUrl, prefix);
    await database.drop();
  }
}

function formatRow(row: GatewayRow): string {
  const ms = (value: number | null) => (value === null ? '-' : value.toFixed(3));
  return [
    row.target.padEnd(6),
    row.kind.padEnd(6),
    String(row.connections).padStart(3),
    row.rps.toFixed(0).padStart(7),
    ms(row.p50Ms).padStart(8),
    ms(row.p99Ms).padStart(8),
    ms(row.ttftP50Ms).padStart(8),
    ms(row.ttftP99Ms).padStart(8),
    (row.edgeCpuMicrosPerRequest === null ? '-' : row.edgeCpuMicrosPerRequest.toFixed(0)).padStart(
      7,
    ),
    String(row.errors).padStart(6),
  ].join(' ');
}

const ROW_HEADER = 'target kind   con     rps  p50(ms)  p99(ms) ttft p50 ttft p99 cpu(us) errors';

function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

log('gateway: direct to the upstream vs through the edge');
log(ROW_HEADER);
const report = await benchGateway(log);
log(`edge peak resident memory: ${report.edgePeakMemoryMiB.toFixed(0)} MiB`);

const pair = (kind: 'json' | 'stream', connections: number) => ({
  direct: report.rows.find(
    (r) => r.target === 'direct' && r.kind === kind && r.connections === connections,
  )!,
  edge: report.rows.find(
    (r) => r.target === 'edge' && r.kind === kind && r.connections === connections,
  )!,
});
const json1 = pair('json', 1);
const stream1 = pair('stream', 1);
log();
log(`overhead, JSON, 1 connection: p50 +${(json1.edge.p50Ms - json1.direct.p50Ms).toFixed(3)} ms`);
log(
  `overhead, stream, 1 connection: time to first token p50 +${(stream1.edge.ttftP50Ms! - stream1.direct.ttftP50Ms!).toFixed(3)} ms`,
);
log(
  `edge CPU per JSON request at 64 connections: ${pair('json', 64).edge.edgeCpuMicrosPerRequest!.toFixed(0)} us`,
);
