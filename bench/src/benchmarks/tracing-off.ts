import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { generateSecretKeySpec } from '@switchyard/security';
import { createTestDatabase, repositoryRoot, startApp, type AppProcess } from '@switchyard/testing';
import { benchChannel, edgeRouting, edgesInTurns } from '../lib/edge-turns.js';

// What tracing costs the edge when it is off (docs/performance.md, "Tracing"): the edge of
// a checkout before tracing (BASELINE_ROOT) and of one with it (CANDIDATE_ROOT, this one by
// default), each with its own router, both without an OTLP endpoint, on one core, the same
// mock upstream, channel and token. They take turns under wrk (JSON and streaming, 32
// connections); CPU per request is each edge's own, from /proc.
//
//   BASELINE_ROOT=/path/to/checkout-before-tracing node bench/dist/benchmarks/tracing-off.js
//   (both checkouts built; BENCH_SECONDS per turn, default 3; 3 rounds)

const LOAD_CPU = '0';
const GATEWAY_CPU = '1';
const SLOT_SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = 3;

const baselineRoot = process.env.BASELINE_ROOT;
if (!baselineRoot) {
  // `pnpm bench` runs every benchmark: this one needs a second checkout to run.
  process.stdout.write(
    'skipped: BASELINE_ROOT names no built checkout (a built checkout from before tracing)\n',
  );
  process.exit(0);
}
const roots = {
  before: path.resolve(baselineRoot),
  after: path.resolve(process.env.CANDIDATE_ROOT ?? repositoryRoot),
};

const database = await createTestDatabase();
const secretKeys = generateSecretKeySpec('bench');
const base = {
  DATABASE_URL: database.url,
  REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  SECRET_KEYS: secretKeys,
  LOG_LEVEL: 'info',
};
const apps: AppProcess[] = [];
try {
  const token = await benchChannel({ env: base, cpus: LOAD_CPU, apps });
  const edges = {} as Record<keyof typeof roots, AppProcess>;
  for (const [name, root] of Object.entries(roots) as [keyof typeof roots, string][]) {
    // A namespace each: each edge follows the routing snapshots of its own checkout's router.
    const env = { ...base, REDIS_PREFIX: `bench-off-${name}-${randomBytes(3).toString('hex')}` };
    apps.push(await startApp('router', { env, cpus: GATEWAY_CPU, root }));
    edges[name] = await startApp('edge', { env, cpus: GATEWAY_CPU, readyPath: '/readyz', root });
    apps.push(edges[name]);
    await edgeRouting(edges[name], token, `${name} edge routing`);
  }
  for (const stream of [false, true]) {
    await edgesInTurns({
      edges,
      label: 'checkout',
      token,
      stream,
      connections: 32,
      rounds: ROUNDS,
      seconds: SLOT_SECONDS,
      loadCpus: LOAD_CPU,
    });
  }
} finally {
  await Promise.all(apps.map((app) => app.stop()));
  await database.drop();
}
