import { SecretCipher } from '@switchyard/security';
import { clearRedisNamespace, waitFor, startApp, type AppProcess } from '@switchyard/testing';
import { combined, cpuSeconds, load, type LoadResult } from '../lib/measure.js';
import { benchEnvironment } from '../lib/environment.js';
import { seedChannel, seedToken } from '../lib/seed.js';

// What converting a provider's wire format costs the edge: the same chat completion through
// the edge to an `openai` channel (the client's bytes passed through) and to an `anthropic`
// and a `gemini` channel (request, answer and stream converted by libs/providers), side by
// side in one run, on one zero-latency mock upstream that speaks all three. As in
// gateway.ts, the load generator, the mock and the router share CPU 0 and the edge has
// CPU 1 to itself, so its CPU time per request (from /proc) is its own; channels and token
// have no limits (no Redis round trip on the request's path), and the usage queue is
// emptied after each load (the metering worker is not run).
//
// The rows are compared with each other, so none may be measured while the edge is still
// being optimised and the others once it is: every case is warmed up before any is measured,
// then measured in ROUNDS short slots, taking turns with the other cases, each round starting
// one case further on.
//
//   node bench/dist/benchmarks/conversion.js      (BENCH_SECONDS, default 10, per case)

const LOAD_CPU = '0';
const EDGE_CPU = '1';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = 5;
/** Each case's measured seconds, split over the rounds (wrk takes whole seconds). */
const SLOT_SECONDS = Math.max(1, Math.round(SECONDS / ROUNDS));
const CONNECTIONS = 64;
const UPSTREAM_KEY = 'sk-bench-upstream';

type Provider = 'openai' | 'anthropic' | 'gemini';
type Kind = 'json' | 'stream';

/** Each channel's model, named as its provider would. */
const MODELS: Record<Provider, string> = {
  openai: 'gpt-4o',
  anthropic: 'claude-sonnet-4-5',
  gemini: 'gemini-2.5-flash',
};

interface Row {
  provider: Provider;
  kind: Kind;
  result: LoadResult;
  edgeCpuMicrosPerRequest: number;
}

/** One slot of a case: what wrk measured, and the edge's CPU seconds meanwhile. */
interface Slot {
  result: LoadResult;
  edgeCpuSeconds: number;
}

function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

function bodyOf(model: string, kind: Kind): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: 'Answer in one sentence.' },
      { role: 'user', content: 'Say something short about benchmarks.' },
    ],
    ...(kind === 'stream' ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}

async function seed(
  databaseUrl: string,
  cipher: SecretCipher,
  upstreamUrl: string,
): Promise<string> {
  for (const provider of Object.keys(MODELS) as Provider[]) {
    await seedChannel(databaseUrl, cipher, {
      name: provider,
      provider,
      baseUrl: upstreamUrl,
      models: [MODELS[provider]],
      keys: [UPSTREAM_KEY],
    });
  }
  return seedToken(databaseUrl, { name: 'conversion' });
}

async function run(): Promise<Row[]> {
  const bench = await benchEnvironment('info');
  const { env } = bench;
  const apps: AppProcess[] = [];
  try {
    const mock = await startApp('mock-upstream', {
      env: { ...env, MOCK_ACCOUNTS: UPSTREAM_KEY },
      cpus: LOAD_CPU,
    });
    apps.push(mock);
    const token = await seed(bench.databaseUrl, new SecretCipher([bench.secretKeys]), mock.url);
    apps.push(await startApp('router', { env, cpus: LOAD_CPU }));
    const edge = await startApp('edge', { env, cpus: EDGE_CPU, readyPath: '/readyz' });
    apps.push(edge);
    const authorization = `Bearer ${token}`;
    await waitFor(
      async () => {
        const response = await fetch(`${edge.url}/v1/models`, { headers: { authorization } });
        return ((await response.json()) as { data: unknown[] }).data.length === 3
          ? true
          : undefined;
      },
      { timeoutMs: 10_000, what: 'edge routing' },
    );

    const cases = (['json', 'stream'] as const).flatMap((kind) =>
      (['openai', 'anthropic', 'gemini'] as const).map((provider) => ({
        provider,
        kind,
        request: {
          url: `${edge.url}/v1/chat/completions`,
          authorization,
          body: bodyOf(MODELS[provider], kind),
          connections: CONNECTIONS,
          cpus: LOAD_CPU,
        },
        slots: [] as Slot[],
      })),
    );
    const emptyUsageQueue = () => clearRedisNamespace(bench.redisUrl, `${bench.prefix}:bull:usage`);
    // Warm up connection pools, JIT and caches on every path before measuring any.
    for (const { request } of cases) {
      await load({ ...request, seconds: 2 });
      await emptyUsageQueue();
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (let turn = 0; turn < cases.length; turn++) {
        const { request, slots } = cases[(round + turn) % cases.length]!;
        const cpuBefore = await cpuSeconds(edge.child.pid!);
        const result = await load({ ...request, seconds: SLOT_SECONDS });
        slots.push({ result, edgeCpuSeconds: (await cpuSeconds(edge.child.pid!)) - cpuBefore });
        await emptyUsageQueue();
      }
    }
    const rows = cases.map(({ provider, kind, slots }) => rowOf(provider, kind, slots));
    for (const row of rows) log(formatRow(row));
    return rows;
  } finally {
    await Promise.all(apps.map((app) => app.stop()));
    await bench.remove();
  }
}

/** A case's slots as one row: their loads combined, the edge's CPU summed. */
function rowOf(provider: Provider, kind: Kind, slots: Slot[]): Row {
  const result = combined(slots.map((slot) => slot.result));
  const cpuSeconds = slots.reduce((a, slot) => a + slot.edgeCpuSeconds, 0);
  return {
    provider,
    kind,
    result,
    edgeCpuMicrosPerRequest: (cpuSeconds / result.requests) * 1e6,
  };
}

function formatRow(row: Row): string {
  return [
    row.provider.padEnd(9),
    row.kind.padEnd(6),
    row.result.rps.toFixed(0).padStart(7),
    row.result.p50Ms.toFixed(3).padStart(8),
    row.result.p99Ms.toFixed(3).padStart(8),
    row.edgeCpuMicrosPerRequest.toFixed(0).padStart(7),
    String(row.result.errors).padStart(6),
  ].join(' ');
}

log(
  `conversion: the edge's cost per request, passed through vs converted (${CONNECTIONS} connections)`,
);
log('channel   kind       rps  p50(ms)  p99(ms) cpu(us) errors');
const rows = await run();
log();
const signed = (micros: number): string => `${micros >= 0 ? '+' : ''}${micros.toFixed(0)}`;
for (const kind of ['json', 'stream'] as const) {
  const cpu = (provider: Provider) =>
    rows.find((r) => r.provider === provider && r.kind === kind)!.edgeCpuMicrosPerRequest;
  const passthrough = cpu('openai');
  log(
    `${kind}: converting costs the edge ${signed(cpu('anthropic') - passthrough)} us (anthropic), ${signed(cpu('gemini') - passthrough)} us (gemini) of CPU per request over passing through (${passthrough.toFixed(0)} us)`,
  );
}
if (rows.some((row) => row.result.errors > 0)) {
  log('some requests failed: the figures above are not comparable');
  process.exitCode = 1;
}
