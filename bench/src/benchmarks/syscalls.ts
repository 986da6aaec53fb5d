import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startApp, type AppProcess } from '@switchyard/testing';
import { benchChannel, chatBody, edgeRouting } from '../lib/edge-turns.js';
import { startDeployedEdge, startDeployedMetering } from '../lib/deployed.js';
import { benchEnvironment } from '../lib/environment.js';
import { FLOORS, startFloor, type RunningFloor } from '../lib/floors.js';
import { cpuTimes, load } from '../lib/measure.js';

// Where the edge's CPU per request goes beside the floor's, in two figures a busy machine
// blurs less than a time (docs/performance.md, "Where the edge's excess goes"):
//
// - the system calls each request costs, counted by `strace -c` attached to the process for
//   one window of load (it slows what it traces, so that window's time is not used);
// - the CPU per request in user space and in the kernel, from /proc, in a window of its own
//   without strace.
//
// The edge (with the gateway benchmark's limited channel and token: every limit, the spend
// hold, usage and outcomes on) and both floors, JSON and streams, pinned as
// the gateway benchmark pins them.
//
//   node bench/dist/benchmarks/syscalls.js   (BENCH_SECONDS, default 5, per window;
//                                             BENCH_CONNECTIONS, default 64)

const LOAD_CPU = '0';
const GATEWAY_CPU = '1';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
/** System calls shown on their own; the rest are summed. */
const SHOWN = ['writev', 'write', 'read', 'epoll_pwait'] as const;

interface Measured {
  target: string;
  kind: 'json' | 'stream';
  userMicros: number;
  systemMicros: number;
  /** Calls per request by system call, of the process's main thread and its helpers. */
  calls: Map<string, number>;
}

interface Target {
  name: string;
  pid: number;
  url: string;
  authorization: string;
}

/** `strace -c`'s summary: calls by system call. */
function parseSummary(text: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    // "% time  seconds  usecs/call  calls  [errors]  syscall"
    if (fields.length < 5 || !/^\d+\.\d+$/.test(fields[0]!)) continue;
    const name = fields[fields.length - 1]!;
    if (name === 'total') continue;
    calls.set(name, Number(fields[3]));
  }
  return calls;
}

/** The system calls `pid` (all its threads) makes while `work` runs. */
async function countCalls(pid: number, work: () => Promise<number>) {
  const directory = await mkdtemp(path.join(tmpdir(), 'switchyard-strace-'));
  const output = path.join(directory, 'summary');
  const tracer = spawn('strace', ['-c', '-f', '-p', String(pid), '-o', output], {
    stdio: 'ignore',
  });
  try {
    // Attaching to every thread takes a moment; calls made before it are not counted, nor
    // are the requests of that moment.
    await sleep(500);
    const requests = await work();
    const exited = once(tracer, 'exit');
    tracer.kill('SIGINT');
    await exited;
    return { requests, calls: parseSummary(await readFile(output, 'utf8')) };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

async function measure(target: Target, kind: 'json' | 'stream'): Promise<Measured> {
  const request = {
    url: `${target.url}/v1/chat/completions`,
    authorization: target.authorization,
    body: chatBody(kind === 'stream'),
    connections: CONNECTIONS,
    cpus: LOAD_CPU,
  };
  await load({ ...request, seconds: 2 });
  const before = await cpuTimes(target.pid);
  const timed = await load({ ...request, seconds: SECONDS });
  const after = await cpuTimes(target.pid);
  const perRequest = (seconds: number) => Math.round((seconds / timed.requests) * 1e6);
  const counted = await countCalls(
    target.pid,
    async () => (await load({ ...request, seconds: SECONDS })).requests,
  );
  const calls = new Map(
    [...counted.calls].map(([name, n]) => [name, n / Math.max(1, counted.requests)] as const),
  );
  return {
    target: target.name,
    kind,
    userMicros: perRequest(after.user - before.user),
    systemMicros: perRequest(after.system - before.system),
    calls,
  };
}

function format(rows: Measured[]): string {
  const header = [
    'target'.padEnd(14),
    'kind'.padEnd(7),
    'user µs'.padStart(8),
    'sys µs'.padStart(7),
    ...SHOWN.map((name) => name.padStart(12)),
    'futex'.padStart(7),
    'other'.padStart(7),
  ].join(' ');
  const lines = rows.map((row) => {
    const of = (name: string) => row.calls.get(name) ?? 0;
    const other = [...row.calls]
      .filter(([name]) => !(SHOWN as readonly string[]).includes(name) && name !== 'futex')
      .reduce((sum, [, n]) => sum + n, 0);
    return [
      row.target.padEnd(14),
      row.kind.padEnd(7),
      String(row.userMicros).padStart(8),
      String(row.systemMicros).padStart(7),
      ...SHOWN.map((name) => of(name).toFixed(2).padStart(12)),
      of('futex').toFixed(2).padStart(7),
      other.toFixed(2).padStart(7),
    ].join(' ');
  });
  return [
    'system calls per request (strace -c, all threads; futex: the helper threads) and CPU per',
    `request (/proc, a window without strace), ${CONNECTIONS} connections`,
    header,
    ...lines,
  ].join('\n');
}

async function main(): Promise<void> {
  if (spawnSync('strace', ['-V']).status !== 0) {
    process.stdout.write('skipped: strace is not installed (apt-get install strace)\n');
    return;
  }
  const bench = await benchEnvironment('info');
  const apps: AppProcess[] = [];
  const floors: RunningFloor[] = [];
  try {
    const token = await benchChannel({
      env: { ...bench.env, DATABASE_URL: bench.databaseUrl, SECRET_KEYS: bench.secretKeys },
      cpus: LOAD_CPU,
      apps,
      limited: true,
    });
    const mockUrl = apps[0]!.url;
    apps.push(await startApp('router', { env: bench.env, cpus: GATEWAY_CPU }));
    apps.push(await startDeployedMetering(bench.env, GATEWAY_CPU));
    const edge = await startDeployedEdge(bench.env, GATEWAY_CPU);
    apps.push(edge);
    await edgeRouting(edge, token, 'edge routing');
    const targets: Target[] = [];
    for (const floor of FLOORS) {
      const started = await startFloor(floor, mockUrl, GATEWAY_CPU);
      floors.push(started);
      targets.push({
        name: floor,
        pid: started.child.pid!,
        url: started.url,
        authorization: 'Bearer sk-bench-upstream',
      });
    }
    targets.push({
      name: 'switchyard',
      pid: edge.child.pid!,
      url: edge.url,
      authorization: `Bearer ${token}`,
    });
    const rows: Measured[] = [];
    for (const kind of ['json', 'stream'] as const)
      for (const target of targets) rows.push(await measure(target, kind));
    process.stdout.write(`${format(rows)}\n`);
  } finally {
    for (const floor of floors) floor.child.kill();
    await Promise.all(apps.map((app) => app.stop()));
    await bench.remove();
  }
}

await main();
