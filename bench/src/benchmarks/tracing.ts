import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { type AddressInfo } from 'node:net';
import { startApp, type AppProcess } from '@switchyard/testing';
import { benchChannel, comparisonBase, edgeRouting, edgesInTurns } from '../lib/edge-turns.js';

// What tracing costs the edge (docs/performance.md, "Tracing"): two edges side by side on
// one core, the same router, mock upstream and channel, one without an OTLP endpoint (no
// SDK loaded) and one exporting every request's spans to a sink in this process. They take
// turns under wrk, JSON and streaming, at 1 and 32 connections; CPU per request is the
// edge's own, from /proc.
//
//   node bench/dist/benchmarks/tracing.js     (BENCH_SECONDS, default 3, per turn; 3 rounds)

const LOAD_CPU = '0';
const GATEWAY_CPU = '1';
const SLOT_SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = 3;

let exportedBytes = 0;
const sink = createServer((request, response) => {
  request.on('data', (chunk: Buffer) => (exportedBytes += chunk.length));
  request.on('end', () =>
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
  );
});
sink.listen(0, '127.0.0.1');
await once(sink, 'listening');
const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;

const { database, base } = await comparisonBase();
const env = { ...base, REDIS_PREFIX: `bench-tracing-${randomBytes(3).toString('hex')}` };
const apps: AppProcess[] = [];
try {
  const token = await benchChannel({ env: env, cpus: LOAD_CPU, apps });
  apps.push(await startApp('router', { env, cpus: GATEWAY_CPU }));
  const edges = {
    off: await startApp('edge', { env, cpus: GATEWAY_CPU, readyPath: '/readyz' }),
    on: await startApp('edge', {
      env: { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint },
      cpus: GATEWAY_CPU,
      readyPath: '/readyz',
    }),
  };
  apps.push(edges.off, edges.on);
  for (const edge of Object.values(edges)) await edgeRouting(edge, token, 'edge routing');
  for (const stream of [false, true]) {
    for (const connections of [1, 32]) {
      await edgesInTurns({
        edges,
        label: 'tracing',
        token,
        stream,
        connections,
        rounds: ROUNDS,
        seconds: SLOT_SECONDS,
        loadCpus: LOAD_CPU,
      });
    }
  }
  process.stdout.write(`${JSON.stringify({ exportedKiB: Math.round(exportedBytes / 1024) })}\n`);
} finally {
  await Promise.all(apps.map((app) => app.stop()));
  await database.drop();
  sink.close();
}
