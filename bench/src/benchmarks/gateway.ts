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
// routing and the usage hand-off to the queue are always on; the metering worker is not
// run here (on two cores it would compete with the load generator and the upstream; it
// has its own benchmark), so the queue is emptied after each scenario. The edge is
// measured twice: with account and token limits checked in Redis on every request, and on
// a channel and token without limits (no Redis round trip on the request's path).
//
//   node bench/dist/benchmarks/gateway.js      (BENCH_SECONDS, default 10, per scenario)

const LOAD_CPU = '0';
const EDGE_CPU = '1';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const UPSTREAM_KEY = 'sk-bench-upstream';

type Target = 'direct' | 'edge+limits' | 'edge';
type Kind = 'json' | 'stream';

interface Row {
  target: Target;
  kind: Kind;
  connections: number;
  result: LoadResult;
  ttftP50Ms: number | null;
  ttftP99Ms: number | null;
  edgeCpuMicrosPerRequest: number | null;
}

function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

function bodyOf(model: string, kind: Kind): string {
  return JSON.stringify({
    model,
    messages: [{ role: 'user', content: 'Say something short about benchmarks.' }],
    ...(kind === 'stream' ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}

async function seed(
  databaseUrl: string,
  cipher: SecretCipher,
  upstreamUrl: string,
): Promise<{ limited: string; unlimited: string }> {
  // Limits far above the load: every request takes the Redis round trip, none is refused.
  const channels = await query<{ id: number }>(
    databaseUrl,
    `INSERT INTO "Channel" (name, kind, "baseUrl", models, "rpmLimit", "tpmLimit", "concurrencyLimit", "updatedAt")
     VALUES ('limited', 'single', $1, '{gpt-4o-mini}', 100000000, 2000000000, 100000, now()),
            ('unlimited', 'single', $1, '{gpt-4o}', NULL, NULL, NULL, now())
     RETURNING id`,
    [upstreamUrl],
  );
  for (const channel of channels) {
    await query(
      databaseUrl,
      `INSERT INTO "ChannelKey" ("channelId", "secretCiphertext", fingerprint, "lastFour") VALUES ($1, $2, $3, $4)`,
      [channel.id, cipher.seal(UPSTREAM_KEY), sha256Hex(UPSTREAM_KEY), lastFour(UPSTREAM_KEY)],
    );
  }
  const limited = generateGatewayToken();
  const unlimited = generateGatewayToken();
  await query(
    databaseUrl,
    `INSERT INTO "Token" (name, "keyHash", "lastFour", quota, "rateLimit", "updatedAt")
     VALUES ('limited', $1, $2, 1000000000000, 100000000, now()), ('unlimited', $3, $4, NULL, NULL, now())`,
    [sha256Hex(limited), lastFour(limited), sha256Hex(unlimited), lastFour(unlimited)],
  );
  return { limited, unlimited };
}

async function run(): Promise<{ rows: Row[]; edgePeakMemoryMiB: number }> {
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
    const tokens = await seed(database.url, new SecretCipher([secretKeys]), mock.url);
    apps.push(await startApp('router', { env, cpus: LOAD_CPU }));
    const edge = await startApp('edge', {
      env,
      cpus: EDGE_CPU,
      readyPath: '/readyz',
    });
    apps.push(edge);
    await eventually(
      async () => {
        const response = await fetch(`${edge.url}/v1/models`, {
          headers: { authorization: `Bearer ${tokens.unlimited}` },
        });
        return ((await response.json()) as { data: unknown[] }).data.length === 2
          ? true
          : undefined;
      },
      10_000,
      'edge routing',
    );

    const targets: Record<Target, { url: string; authorization: string; model: string }> = {
      direct: {
        url: `${mock.url}/v1/chat/completions`,
        authorization: `Bearer ${UPSTREAM_KEY}`,
        model: 'gpt-4o-mini',
      },
      'edge+limits': {
        url: `${edge.url}/v1/chat/completions`,
        authorization: `Bearer ${tokens.limited}`,
        model: 'gpt-4o-mini',
      },
      edge: {
        url: `${edge.url}/v1/chat/completions`,
        authorization: `Bearer ${tokens.unlimited}`,
        model: 'gpt-4o',
      },
    };

    const rows: Row[] = [];
    for (const kind of ['json', 'stream'] as const) {
      for (const connections of [1, 64]) {
        for (const target of ['direct', 'edge+limits', 'edge'] as const) {
          const { model, ...address } = targets[target];
          const request = { ...address, body: bodyOf(model, kind), connections };
          // Warm up connection pools, JIT and caches before measuring.
          await load({ ...request, seconds: 2, cpus: LOAD_CPU });
          const cpuBefore = await cpuSeconds(edge.child.pid!);
          const result = await load({ ...request, seconds: SECONDS, cpus: LOAD_CPU });
          const cpuUsed = (await cpuSeconds(edge.child.pid!)) - cpuBefore;
          const ttft =
            kind === 'stream'
              ? await timeToFirstToken({ ...request, seconds: Math.max(3, SECONDS / 2) })
              : null;
          const row: Row = {
            target,
            kind,
            connections,
            result,
            ttftP50Ms: ttft?.p50Ms ?? null,
            ttftP99Ms: ttft?.p99Ms ?? null,
            edgeCpuMicrosPerRequest: target === 'direct' ? null : (cpuUsed / result.requests) * 1e6,
          };
          rows.push(row);
          log(formatRow(row));
          await clearRedisNamespace(redisUrl, `${prefix}:bull:usage`);
        }
      }
    }
    return { rows, edgePeakMemoryMiB: await peakMemoryMiB(edge.child.pid!) };
  } finally {
    await Promise.all(apps.map((app) => app.stop()));
    await clearRedisNamespace(redisUrl, prefix);
    await database.drop();
  }
}

function formatRow(row: Row): string {
  const ms = (value: number | null) => (value === null ? '-' : value.toFixed(3));
  return [
    row.target.padEnd(11),
    row.kind.padEnd(6),
    String(row.connections).padStart(3),
    row.result.rps.toFixed(0).padStart(7),
    ms(row.result.p50Ms).padStart(8),
    ms(row.result.p99Ms).padStart(8),
    ms(row.ttftP50Ms).padStart(8),
    ms(row.ttftP99Ms).padStart(8),
    (row.edgeCpuMicrosPerRequest === null ? '-' : row.edgeCpuMicrosPerRequest.toFixed(0)).padStart(
      7,
    ),
    String(row.result.errors).padStart(6),
  ].join(' ');
}

log('gateway: direct to the upstream vs through the edge');
log('target      kind   con     rps  p50(ms)  p99(ms) ttft p50 ttft p99 cpu(us) errors');
const report = await run();
log(`edge peak resident memory: ${report.edgePeakMemoryMiB.toFixed(0)} MiB`);

const find = (target: Target, kind: Kind, connections: number) =>
  report.rows.find((r) => r.target === target && r.kind === kind && r.connections === connections)!;
log();
for (const target of ['edge+limits', 'edge'] as const) {
  const json = find(target, 'json', 1).result.p50Ms - find('direct', 'json', 1).result.p50Ms;
  const ttft = find(target, 'stream', 1).ttftP50Ms! - find('direct', 'stream', 1).ttftP50Ms!;
  const cpu = find(target, 'json', 64).edgeCpuMicrosPerRequest!;
  log(
    `${target}: p50 overhead (JSON, 1 conn) +${json.toFixed(3)} ms; TTFT overhead (1 conn) +${ttft.toFixed(3)} ms; CPU per JSON request (64 conns) ${cpu.toFixed(0)} us`,
  );
}
