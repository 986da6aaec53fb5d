import { randomBytes } from 'node:crypto';
import { startApp, type AppProcess } from '@switchyard/testing';
import {
  benchChannel,
  checkoutRoots,
  comparisonBase,
  edgeRouting,
  edgesInTurns,
} from '../lib/edge-turns.js';

// One change to the edge, before and after, in one run (docs/performance.md, "Two
// checkouts in turns"): the edge of a built checkout from before the change
// (BASELINE_ROOT) and of this one (or CANDIDATE_ROOT), each with its own router and
// metering worker in a Redis namespace of its own, everything on (a channel and a token
// with limits far above the load, usage settled into Postgres), on one core with the same
// mock upstream. The edges take turns under wrk in short windows, many rounds, so a
// machine whose speed drifts by a third within minutes drifts alike for both; each
// round's two figures make a pair, and the run ends with the median of the pairs' ratios.
//
//   BASELINE_ROOT=/path/to/built-checkout node bench/dist/benchmarks/checkouts.js
//   (BENCH_SECONDS per turn, default 2; BENCH_ROUNDS, default 8; BENCH_CONNECTIONS, default 64;
//   BENCH_PROMPT_BYTES, a prompt of that size, which the mock echoes in its answer;
//   BENCH_ACCOUNTS, the channel's accounts, default 1: a relay's pool of that many)

const LOAD_CPU = '0';
const GATEWAY_CPU = '1';
const SLOT_SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const PROMPT_BYTES = Number(process.env.BENCH_PROMPT_BYTES ?? 0);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 1);

const roots = checkoutRoots('a built checkout to compare this one with');
const { database, base } = await comparisonBase();
const apps: AppProcess[] = [];
try {
  const token = await benchChannel({
    env: base,
    cpus: LOAD_CPU,
    apps,
    limited: true,
    accounts: ACCOUNTS,
  });
  const edges = {} as Record<keyof typeof roots, AppProcess>;
  for (const [name, root] of Object.entries(roots) as [keyof typeof roots, string][]) {
    const env = { ...base, REDIS_PREFIX: `bench-ab-${name}-${randomBytes(3).toString('hex')}` };
    apps.push(await startApp('router', { env, cpus: GATEWAY_CPU, root }));
    apps.push(await startApp('metering', { env, cpus: GATEWAY_CPU, root }));
    edges[name] = await startApp('edge', { env, cpus: GATEWAY_CPU, readyPath: '/readyz', root });
    apps.push(edges[name]);
    await edgeRouting(edges[name], token, `${name} edge routing`);
  }
  for (const stream of [false, true]) {
    const results = await edgesInTurns({
      edges,
      label: 'checkout',
      token,
      stream,
      connections: CONNECTIONS,
      rounds: ROUNDS,
      seconds: SLOT_SECONDS,
      loadCpus: LOAD_CPU,
      promptBytes: PROMPT_BYTES,
    });
    const of = (name: keyof typeof roots) =>
      results.find((result) => result.name === name)!.edgeCpuUsPerRound;
    const before = of('before');
    const ratios = of('after')
      .map((after, round) => after / before[round]!)
      .sort((a, b) => a - b);
    const median = ratios[Math.floor(ratios.length / 2)]!;
    process.stdout.write(
      `${stream ? 'stream' : 'json'}: edge CPU per request after/before, median of ${ratios.length} paired rounds ${median.toFixed(3)} (from ${ratios[0]!.toFixed(2)} to ${ratios.at(-1)!.toFixed(2)})\n`,
    );
  }
} finally {
  await Promise.all(apps.map((app) => app.stop()));
  await database.drop();
}
