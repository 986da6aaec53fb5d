import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SecretCipher } from '@switchyard/security';
import {
  waitFor,
  freePort,
  query,
  repositoryRoot,
  startApp,
  type AppProcess,
} from '@switchyard/testing';
import {
  combined,
  cpuSeconds,
  pidsOf,
  load,
  peakMemoryMiB,
  residentMemoryMiB,
  timeToFirstToken,
  type LoadResult,
} from '../lib/measure.js';
import {
  EDGE_NODE_FLAGS,
  METERING_NODE_FLAGS,
  startDeployedEdge,
  startDeployedMetering,
} from '../lib/deployed.js';
import { benchEnvironment } from '../lib/environment.js';
import { FLOORS, startFloor, startShellFloor, type Floor } from '../lib/floors.js';
import { seedChannel, seedToken } from '../lib/seed.js';

// The gateway's overhead, side by side in one run: the same requests sent straight to a
// zero-latency upstream, through two bare Node pass-throughs (the floor of any Node gateway
// here, over Node's own client and over undici: bench/src/lib/bare-proxy.ts), through the
// undici floor inside the suite's service shell (NestJS, the bus, BullMQ's producer, the pool,
// metrics and health loaded and started as in the edge, and nothing per request but the
// pass-through: bench/src/lib/shell-floor.ts), through Portkey's gateway (1.15.2, a
// pass-through proxy with no auth, limits or metering: bench/portkey) and through Switchyard
// with everything on (bearer
// auth, routing, account and token limits, usage records settled into Postgres by the
// metering worker, outcomes reported to the router). The load generator and the upstream
// share CPU 0; the gateway under test has CPU 1 (Switchyard: its edge, router and metering
// worker together; Postgres and Redis are not pinned). Switchyard is also measured on a
// channel and token without limits (no Redis round trip on the request's path).
//
// Each scenario (kind and connections) warms every target up, then measures them in three
// rounds of short windows, taking turns. CPU per request comes from /proc: the edge's own,
// and the whole suite's (edge, router, metering, Redis and every Postgres process), read
// after the metering worker has settled the window's last usage record, so the work a
// request causes later is counted too.
//
// The run ends with Switchyard's figures against the floor's, each against the cheaper of
// the two pass-throughs for that figure (docs/performance.md, "Against the floor").
//
//   node bench/dist/benchmarks/gateway.js      (BENCH_SECONDS, default 10, per target and scenario)
//   EDGE_NODE_FLAGS='--max-semi-space-size=16' node bench/dist/benchmarks/gateway.js
//   BENCH_TARGETS=direct,floor-pipe,floor-undici,switchyard   (a subset; Portkey is then not installed)
//   BENCH_EDGE_PROFILE=/tmp/edge-prof   (a V8 CPU profile of the edge over the whole run; its
//                                        figures are then not comparable: bench/dist/lib/profile-top.js reads it)
//   BENCH_METERING_PROFILE=/tmp/metering-prof   (the same of the metering worker)

const LOAD_CPU = '0';
const GATEWAY_CPU = '1';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = 3;
/** Each target's measured seconds, split over the rounds (wrk takes whole seconds). */
const SLOT_SECONDS = Math.max(1, Math.round(SECONDS / ROUNDS));
const UPSTREAM_KEY = 'sk-bench-upstream';
const PROFILE_DIR = process.env.BENCH_EDGE_PROFILE;
const METERING_PROFILE_DIR = process.env.BENCH_METERING_PROFILE;
/** V8 flags for the edge: as deployed (deploy/k8s), unless set to compare heap settings. */
const EDGE_FLAGS = (
  process.env.EDGE_NODE_FLAGS?.split(' ').filter(Boolean) ?? [...EDGE_NODE_FLAGS]
).concat(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []);
const PORTKEY_START = path.join(
  repositoryRoot,
  'bench/portkey/node_modules/@portkey-ai/gateway/build/start-server.js',
);

const ALL_TARGETS = [
  'direct',
  'floor-pipe',
  'floor-undici',
  'shell',
  'portkey',
  'switchyard',
  'switchyard-nolimits',
] as const;
type Target = (typeof ALL_TARGETS)[number];
const TARGETS: readonly Target[] = process.env.BENCH_TARGETS
  ? ALL_TARGETS.filter((target) => process.env.BENCH_TARGETS!.split(',').includes(target))
  : ALL_TARGETS;
type Kind = 'json' | 'stream';

interface Row {
  target: Target;
  kind: Kind;
  connections: number;
  result: LoadResult;
  ttftP50Ms: number | null;
  ttftP99Ms: number | null;
  /** The gateway process's own CPU per request (the edge, the bare pass-through or Portkey). */
  gatewayCpuMicros: number | null;
  /** Switchyard's processes, Postgres and Redis, per request. */
  suiteCpuMicros: Record<SuitePart, number> | null;
}

const SUITE_PARTS = ['edge', 'router', 'metering', 'redis', 'postgres'] as const;
type SuitePart = (typeof SUITE_PARTS)[number];

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
  await seedChannel(databaseUrl, cipher, {
    name: 'limited',
    provider: 'openai',
    baseUrl: upstreamUrl,
    models: ['gpt-4o-mini'],
    keys: [UPSTREAM_KEY],
    limits: { rpm: 100_000_000, tpm: 2_000_000_000, concurrency: 100_000 },
  });
  await seedChannel(databaseUrl, cipher, {
    name: 'unlimited',
    provider: 'openai',
    baseUrl: upstreamUrl,
    models: ['gpt-4o'],
    keys: [UPSTREAM_KEY],
  });
  return {
    limited: await seedToken(databaseUrl, {
      name: 'limited',
      limits: { quota: 1_000_000_000_000, rateLimit: 100_000_000 },
    }),
    unlimited: await seedToken(databaseUrl, { name: 'unlimited' }),
  };
}

interface Processes {
  edge: number;
  router: number;
  metering: number;
}

/** CPU seconds of each part of the suite; Postgres and Redis as every process of theirs. */
async function suiteCpu(processes: Processes): Promise<Record<SuitePart, number>> {
  const sum = async (pids: number[]) =>
    (await Promise.all(pids.map((pid) => cpuSeconds(pid).catch(() => 0)))).reduce(
      (a, b) => a + b,
      0,
    );
  return {
    edge: await cpuSeconds(processes.edge),
    router: await cpuSeconds(processes.router),
    metering: await cpuSeconds(processes.metering),
    redis: await sum(await pidsOf('redis-server')),
    postgres: await sum(await pidsOf('postgres')),
  };
}

/** Waits until the metering worker has settled every usage record sent so far. */
async function settled(databaseUrl: string): Promise<void> {
  let last = -1;
  let steady = 0;
  while (steady < 3) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [row] = await query<{ rows: string }>(
      databaseUrl,
      'SELECT count(*) AS rows FROM "UsageLog"',
    );
    const rows = Number(row!.rows);
    steady = rows === last ? steady + 1 : 0;
    last = rows;
  }
}

/** Portkey's gateway comes from its own lockfile (bench/portkey), outside the workspace. */
function installPortkey(): void {
  if (existsSync(PORTKEY_START)) return;
  log('installing Portkey 1.15.2 into bench/portkey (npm ci)');
  execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: path.join(repositoryRoot, 'bench/portkey'),
    stdio: 'inherit',
  });
}

interface Report {
  rows: Row[];
  /** Each gateway's resident memory once started, before any load: its modules and heap. */
  restingMemoryMiB: Record<string, number>;
  peakMemoryMiB: Record<string, number>;
}

async function run(): Promise<Report> {
  const bench = await benchEnvironment('info');
  const { env } = bench;
  const apps: AppProcess[] = [];
  let portkey: ChildProcess | undefined;
  const floors: Partial<Record<Floor, ChildProcess>> = {};
  try {
    const mock = await startApp('mock-upstream', {
      env: { ...env, MOCK_ACCOUNTS: UPSTREAM_KEY },
      cpus: LOAD_CPU,
    });
    apps.push(mock);
    const tokens = await seed(bench.databaseUrl, new SecretCipher([bench.secretKeys]), mock.url);
    const router = await startApp('router', { env, cpus: GATEWAY_CPU });
    apps.push(router);
    const metering = await startDeployedMetering(env, GATEWAY_CPU, [
      ...METERING_NODE_FLAGS,
      ...(METERING_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${METERING_PROFILE_DIR}`] : []),
    ]);
    apps.push(metering);
    const edge = await startDeployedEdge(env, GATEWAY_CPU, EDGE_FLAGS);
    apps.push(edge);
    await waitFor(
      async () => {
        const response = await fetch(`${edge.url}/v1/models`, {
          headers: { authorization: `Bearer ${tokens.unlimited}` },
        });
        return ((await response.json()) as { data: unknown[] }).data.length === 2
          ? true
          : undefined;
      },
      { timeoutMs: 10_000, what: 'edge routing' },
    );
    const portkeyPort = await freePort();
    const portkeyUrl = `http://127.0.0.1:${portkeyPort}`;
    if (TARGETS.includes('portkey')) {
      portkey = spawn(
        'taskset',
        ['-c', GATEWAY_CPU, process.execPath, PORTKEY_START, `--port=${portkeyPort}`, '--headless'],
        { env: { ...process.env, NODE_ENV: 'production' }, stdio: 'ignore' },
      );
      await waitFor(
        () =>
          fetch(portkeyUrl).then(
            () => true,
            () => undefined,
          ),
        { timeoutMs: 20_000, what: 'Portkey listening' },
      );
    }
    const shell = TARGETS.includes('shell')
      ? await startShellFloor(env, mock.url, GATEWAY_CPU)
      : undefined;
    if (shell) apps.push(shell);
    const floorUrls = {} as Record<Floor, string>;
    for (const floor of FLOORS) {
      if (!TARGETS.includes(floor)) continue;
      const started = await startFloor(floor, mock.url, GATEWAY_CPU);
      floors[floor] = started.child;
      floorUrls[floor] = started.url;
    }
    const processes: Processes = {
      edge: edge.child.pid!,
      router: router.child.pid!,
      metering: metering.child.pid!,
    };
    const gateways: Record<string, number> = { edge: processes.edge };
    if (portkey) gateways.portkey = portkey.pid!;
    for (const [floor, child] of Object.entries(floors)) gateways[floor] = child.pid!;
    if (shell) gateways.shell = shell.child.pid!;
    const resting: Record<string, number> = {};
    for (const [name, pid] of Object.entries(gateways))
      resting[name] = await residentMemoryMiB(pid);

    const targets: Record<
      Target,
      { url: string; authorization: string; model: string; headers?: Record<string, string> }
    > = {
      direct: {
        url: `${mock.url}/v1/chat/completions`,
        authorization: `Bearer ${UPSTREAM_KEY}`,
        model: 'gpt-4o-mini',
      },
      'floor-pipe': {
        url: `${floorUrls['floor-pipe']}/v1/chat/completions`,
        authorization: `Bearer ${UPSTREAM_KEY}`,
        model: 'gpt-4o-mini',
      },
      'floor-undici': {
        url: `${floorUrls['floor-undici']}/v1/chat/completions`,
        authorization: `Bearer ${UPSTREAM_KEY}`,
        model: 'gpt-4o-mini',
      },
      shell: {
        url: `${shell?.url}/v1/chat/completions`,
        authorization: `Bearer ${UPSTREAM_KEY}`,
        model: 'gpt-4o-mini',
      },
      portkey: {
        url: `${portkeyUrl}/v1/chat/completions`,
        authorization: `Bearer ${UPSTREAM_KEY}`,
        model: 'gpt-4o-mini',
        headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${mock.url}/v1` },
      },
      switchyard: {
        url: `${edge.url}/v1/chat/completions`,
        authorization: `Bearer ${tokens.limited}`,
        model: 'gpt-4o-mini',
      },
      'switchyard-nolimits': {
        url: `${edge.url}/v1/chat/completions`,
        authorization: `Bearer ${tokens.unlimited}`,
        model: 'gpt-4o',
      },
    };

    /** The process whose CPU a target's requests cost; none for the upstream itself. */
    const gatewayPidOf = (target: Target): number | null =>
      target === 'direct'
        ? null
        : target.startsWith('switchyard')
          ? processes.edge
          : target === 'floor-pipe' || target === 'floor-undici'
            ? floors[target]!.pid!
            : target === 'shell'
              ? shell!.child.pid!
              : portkey!.pid!;
    const rows: Row[] = [];
    for (const kind of ['json', 'stream'] as const) {
      for (const connections of [1, 64]) {
        const cases = TARGETS.map((target) => {
          const { model, ...address } = targets[target];
          return {
            target,
            ours: target.startsWith('switchyard'),
            request: { ...address, body: bodyOf(model, kind), connections, cpus: LOAD_CPU },
            loads: [] as LoadResult[],
            gatewaySeconds: 0,
            suiteSeconds: { edge: 0, router: 0, metering: 0, redis: 0, postgres: 0 },
          };
        });
        // Warm up connection pools, JIT and caches on every path before measuring any.
        for (const { request, ours } of cases) {
          await load({ ...request, seconds: 2 });
          if (ours) await settled(bench.databaseUrl);
        }
        // The targets take turns, each round starting one later, so none is measured only
        // while the machine is in one mood (single-connection figures drift by a tenth of a
        // millisecond from one window to the next here).
        for (let round = 0; round < ROUNDS; round++) {
          for (let turn = 0; turn < cases.length; turn++) {
            const measured = cases[(round + turn) % cases.length]!;
            const gatewayPid = gatewayPidOf(measured.target);
            const gatewayBefore = gatewayPid ? await cpuSeconds(gatewayPid) : 0;
            const suiteBefore = measured.ours ? await suiteCpu(processes) : null;
            measured.loads.push(await load({ ...measured.request, seconds: SLOT_SECONDS }));
            if (measured.ours) await settled(bench.databaseUrl);
            if (gatewayPid)
              measured.gatewaySeconds += (await cpuSeconds(gatewayPid)) - gatewayBefore;
            if (suiteBefore) {
              const suiteAfter = await suiteCpu(processes);
              for (const part of SUITE_PARTS)
                measured.suiteSeconds[part] += suiteAfter[part] - suiteBefore[part];
            }
          }
        }
        for (const measured of cases) {
          const { target, request } = measured;
          const result = combined(measured.loads);
          const ttft =
            kind === 'stream'
              ? await timeToFirstToken({ ...request, seconds: Math.max(3, SECONDS / 2) })
              : null;
          const perRequest = (seconds: number) => (seconds / result.requests) * 1e6;
          const row: Row = {
            target,
            kind,
            connections,
            result,
            ttftP50Ms: ttft?.p50Ms ?? null,
            ttftP99Ms: ttft?.p99Ms ?? null,
            gatewayCpuMicros: target === 'direct' ? null : perRequest(measured.gatewaySeconds),
            suiteCpuMicros: measured.ours
              ? (Object.fromEntries(
                  SUITE_PARTS.map((part) => [part, perRequest(measured.suiteSeconds[part])]),
                ) as Record<SuitePart, number>)
              : null,
          };
          rows.push(row);
          log(formatRow(row));
        }
      }
    }
    const peaks: Record<string, number> = {
      router: await peakMemoryMiB(processes.router),
      metering: await peakMemoryMiB(processes.metering),
    };
    for (const [name, pid] of Object.entries(gateways)) peaks[name] = await peakMemoryMiB(pid);
    return { rows, restingMemoryMiB: resting, peakMemoryMiB: peaks };
  } finally {
    portkey?.kill();
    for (const child of Object.values(floors)) child.kill();
    await Promise.all(apps.map((app) => app.stop()));
    await bench.remove();
  }
}

const total = (parts: Record<SuitePart, number>) => Object.values(parts).reduce((a, b) => a + b, 0);

function formatRow(row: Row): string {
  const ms = (value: number | null) => (value === null ? '-' : value.toFixed(3));
  const us = (value: number | null) => (value === null ? '-' : value.toFixed(0));
  const suite = row.suiteCpuMicros;
  return [
    row.target.padEnd(19),
    row.kind.padEnd(6),
    String(row.connections).padStart(3),
    row.result.rps.toFixed(0).padStart(7),
    ms(row.result.p50Ms).padStart(8),
    ms(row.result.p99Ms).padStart(8),
    ms(row.ttftP50Ms).padStart(8),
    ms(row.ttftP99Ms).padStart(8),
    us(row.gatewayCpuMicros).padStart(7),
    us(suite && total(suite)).padStart(7),
    (suite
      ? `${us(suite.edge)}/${us(suite.router)}/${us(suite.metering)}/${us(suite.redis)}/${us(suite.postgres)}`
      : '-'
    ).padStart(22),
    String(row.result.errors).padStart(6),
  ].join(' ');
}

log('gateway: direct to the upstream, through Portkey, and through Switchyard with everything on');
log(
  'target              kind   con     rps  p50(ms)  p99(ms) ttft p50 ttft p99 gw cpu  suite  edge/router/meter/redis/pg errors',
);
if (TARGETS.includes('portkey')) installPortkey();
const report = await run();
const inMiB = (figures: Record<string, number>) =>
  Object.entries(figures)
    .map(([name, mib]) => `${name} ${mib.toFixed(0)}`)
    .join(', ');
log(`resident memory at rest (MiB): ${inMiB(report.restingMemoryMiB)}`);
log(`peak resident memory (MiB): ${inMiB(report.peakMemoryMiB)}`);

const find = (target: Target, kind: Kind, connections: number) =>
  report.rows.find((r) => r.target === target && r.kind === kind && r.connections === connections);
const p50Overhead = (target: Target) =>
  find(target, 'json', 1)!.result.p50Ms - find('direct', 'json', 1)!.result.p50Ms;
const ttftOverhead = (target: Target) =>
  find(target, 'stream', 1)!.ttftP50Ms! - find('direct', 'stream', 1)!.ttftP50Ms!;
log();
for (const target of TARGETS.filter((t) => t !== 'direct')) {
  const busy = find(target, 'json', 64)!;
  const suite = busy.suiteCpuMicros
    ? `, whole suite ${total(busy.suiteCpuMicros).toFixed(0)} us`
    : '';
  // The overheads are over the direct path: without it in the run there are none.
  const overheads = TARGETS.includes('direct')
    ? `p50 overhead (JSON, 1 conn) +${p50Overhead(target).toFixed(3)} ms; TTFT overhead (1 conn) +${ttftOverhead(target).toFixed(3)} ms; `
    : '';
  log(
    `${target}: ${overheads}JSON at 64 conns ${busy.result.rps.toFixed(0)} requests/s, gateway CPU ${busy.gatewayCpuMicros!.toFixed(0)} us per request${suite}`,
  );
}
if (TARGETS.includes('portkey') && TARGETS.includes('switchyard')) {
  const ratio =
    find('switchyard', 'json', 64)!.result.rps / find('portkey', 'json', 64)!.result.rps;
  log(`switchyard / portkey, JSON at 64 connections, one core each: ${ratio.toFixed(2)}x`);
}

// The targets, read against the floor of this same run: for each figure the cheaper
// of the two pass-throughs (docs/performance.md, "Against the floor").
const floorsRun = FLOORS.filter((floor) => TARGETS.includes(floor));
if (floorsRun.length > 0 && TARGETS.includes('switchyard') && TARGETS.includes('direct')) {
  interface Figure {
    name: string;
    /** The figure of a target; lower is better unless `higher`. */
    of: (target: Target) => number;
    higher?: boolean;
    unit: string;
    /** Switchyard against the floor: a ratio, or a difference in the figure's unit. */
    compare: 'ratio' | 'difference';
    /** The target for the figure, if it has one. */
    target?: string;
    met?: (edge: number, floor: number) => boolean;
  }
  const figures: Figure[] = [
    {
      name: 'edge CPU per request, JSON, 64 conns',
      of: (t) => find(t, 'json', 64)!.gatewayCpuMicros!,
      unit: 'us',
      compare: 'ratio',
      target: '<= 1.5x',
      met: (edge, floor) => edge <= 1.5 * floor,
    },
    {
      name: 'edge CPU per request, stream, 64 conns',
      of: (t) => find(t, 'stream', 64)!.gatewayCpuMicros!,
      unit: 'us',
      compare: 'ratio',
      target: '<= 1.5x',
      met: (edge, floor) => edge <= 1.5 * floor,
    },
    {
      name: 'requests/s, JSON, 64 conns',
      of: (t) => find(t, 'json', 64)!.result.rps,
      higher: true,
      unit: '/s',
      compare: 'ratio',
      target: '>= 0.5x',
      met: (edge, floor) => edge >= 0.5 * floor,
    },
    {
      name: 'p50 overhead, JSON, 1 conn',
      of: p50Overhead,
      unit: 'ms',
      compare: 'difference',
      target: '<= +0.15 ms',
      met: (edge, floor) => edge <= floor + 0.15,
    },
    {
      name: 'TTFT overhead, stream, 1 conn',
      of: ttftOverhead,
      unit: 'ms',
      compare: 'difference',
      target: '<= +0.15 ms',
      met: (edge, floor) => edge <= floor + 0.15,
    },
    {
      name: 'peak resident memory',
      of: (t) => report.peakMemoryMiB[t === 'switchyard' ? 'edge' : t]!,
      unit: 'MiB',
      compare: 'difference',
      target: '<= +20 MiB',
      met: (edge, floor) => edge <= floor + 20,
    },
    {
      // Not a target of its own: the part of the peak that is there before any request.
      name: 'resident memory at rest',
      of: (t) => report.restingMemoryMiB[t === 'switchyard' ? 'edge' : t]!,
      unit: 'MiB',
      compare: 'difference',
    },
  ];
  const number = (value: number, unit: string) =>
    unit === 'ms' ? value.toFixed(3) : value.toFixed(0);
  const against = (figure: Figure, value: number, floor: number) =>
    figure.compare === 'ratio'
      ? `${(value / floor).toFixed(2)}x`
      : `${value - floor >= 0 ? '+' : ''}${number(value - floor, figure.unit)} ${figure.unit}`;
  // The service shell alone (lib/shell-floor.ts), when it ran: what of Switchyard's excess
  // any edge built on the suite's stack has before its first feature.
  const withShell = TARGETS.includes('shell');
  const summary: Record<
    string,
    { floor: number; floorTarget: Target; edge: number; shell?: number }
  > = {};
  log();
  log('against the floor (the cheaper pass-through for each figure, this run):');
  log(
    'figure                                   floor (which)          switchyard  against floor  target        met' +
      (withShell ? '   shell alone  against floor' : ''),
  );
  for (const figure of figures) {
    const [cheapest] = [...floorsRun].sort((a, b) =>
      figure.higher ? figure.of(b) - figure.of(a) : figure.of(a) - figure.of(b),
    );
    const floor = figure.of(cheapest!);
    const edge = figure.of('switchyard');
    const shell = withShell ? figure.of('shell') : undefined;
    summary[figure.name] = { floor, floorTarget: cheapest!, edge, ...(withShell && { shell }) };
    log(
      [
        figure.name.padEnd(40),
        `${number(floor, figure.unit)} ${figure.unit} (${cheapest})`.padEnd(22),
        `${number(edge, figure.unit)} ${figure.unit}`.padStart(11),
        against(figure, edge, floor).padStart(14),
        ` ${figure.target ?? '-'}`.padEnd(14),
        (figure.met ? (figure.met(edge, floor) ? 'yes' : 'no') : '-').padEnd(3),
        ...(shell === undefined
          ? []
          : [
              `${number(shell, figure.unit)} ${figure.unit}`.padStart(13),
              against(figure, shell, floor).padStart(14),
            ]),
      ].join(' '),
    );
  }
  // One line to gather runs by (median of three in docs/performance.md).
  log(`AGAINST_FLOOR ${JSON.stringify(summary)}`);
}
