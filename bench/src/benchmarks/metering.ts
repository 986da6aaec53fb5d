#!/usr/bin/env node
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { loadEnvironment, StoreEnv } from '@switchyard/config';
import { USAGE_BATCH_MAX_RECORDS, type UsageRecord } from '@switchyard/contracts';
import { QueueConnection, UsageQueue, busConnectionOf } from '@switchyard/messaging';
import {
  clearRedisNamespace,
  createTestDatabase,
  query,
  startApp,
  type AppProcess,
} from '@switchyard/testing';
import { Redis } from 'ioredis';
import { METERING_NODE_FLAGS } from '../lib/deployed.js';
import { cpuSeconds, peakMemoryMiB } from '../lib/measure.js';

// Metering benchmark: the built metering app (apps/metering/dist/main.js) runs as its own
// process against a fresh database and Redis namespace. This process is the edge: it pushes
// a burst of usage records in batch jobs, exactly as a busy edge enqueues them (full
// batches of USAGE_BATCH_MAX_RECORDS), and samples the worker's /metrics (settled records,
// lag, depth) while Postgres fills.
//
//   node bench/dist/benchmarks/metering.js [--records 100000] [--batch 500] [--tokens 50] [--channels 10]
//                                          [--sample-ms 250] [--out result.json] [--app-env K=V ...]

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    batch: { type: 'string', default: String(USAGE_BATCH_MAX_RECORDS) },
    'in-flight': { type: 'string', default: '2' },
    tokens: { type: 'string', default: '50' },
    channels: { type: 'string', default: '10' },
    'sample-ms': { type: 'string', default: '250' },
    'timeout-s': { type: 'string', default: '180' },
    out: { type: 'string' },
    'app-env': { type: 'string', multiple: true, default: [] },
  },
});

const RECORDS = Number(values.records);
const BATCH = Number(values.batch);
const IN_FLIGHT = Number(values['in-flight']);
const TOKENS = Number(values.tokens);
const CHANNELS = Number(values.channels);
const SAMPLE_MS = Number(values['sample-ms']);
const TIMEOUT_MS = Number(values['timeout-s']) * 1000;
const APP_ENV = Object.fromEntries(
  (values['app-env'] ?? []).map((pair) => {
    const at = pair.indexOf('=');
    if (at < 1) throw new Error(`--app-env takes NAME=value, got ${JSON.stringify(pair)}`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }),
);

interface Sample {
  /** Milliseconds since the burst started. */
  t: number;
  settled: number;
  lagSeconds: number;
  depth: number;
}

const MODELS = [
  'gpt-4o',
  'gpt-4o-mini',
  'gpt-4.1-mini',
  'o4-mini',
  'gpt-3.5-turbo',
  'claude-sonnet-4',
];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function seed(databaseUrl: string) {
  const tokens = await query<{ id: number }>(
    databaseUrl,
    `INSERT INTO "Token" ("name", "keyHash", "lastFour", "quota", "updatedAt")
     SELECT 'bench ' || g, md5(random()::text) || md5(random()::text), 'bnch',
            CASE WHEN g % 2 = 0 THEN NULL ELSE 1000000000000000 END, now()
     FROM generate_series(1, $1) g RETURNING "id"`,
    [TOKENS],
  );
  const channels = await query<{ id: number }>(
    databaseUrl,
    `INSERT INTO "Channel" ("name", "kind", "baseUrl", "models", "updatedAt")
     SELECT 'bench ' || g, 'single', 'http://127.0.0.1:1', ARRAY['gpt-4o'], now()
     FROM generate_series(1, $1) g RETURNING "id"`,
    [CHANNELS],
  );
  const keys = await query<{ id: number; channelId: number }>(
    databaseUrl,
    `INSERT INTO "ChannelKey" ("channelId", "secretCiphertext", "fingerprint", "lastFour")
     SELECT c."id", 'sealed', md5(random()::text) || md5(random()::text), 'bnch'
     FROM "Channel" c, generate_series(1, 2) RETURNING "id", "channelId"`,
  );
  return {
    tokens: tokens.map((t) => t.id),
    channels: channels.map((c) => ({
      id: c.id,
      keys: keys.filter((k) => k.channelId === c.id).map((k) => k.id),
    })),
  };
}

function parseMetrics(text: string): { settled: number; lagSeconds: number; depth: number } {
  let settled = 0;
  let lagSeconds = 0;
  let depth = 0;
  for (const line of text.split('\n')) {
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    // Billed only: a record delivered again (a job whose lock lapsed) is not progress.
    if (line.startsWith('metering_records_settled_total{') && line.includes('result="billed"')) {
      settled += value;
    } else if (line.startsWith('metering_lag_seconds')) lagSeconds = value;
    else if (line.startsWith('metering_queue_depth')) depth = value;
  }
  return { settled, lagSeconds, depth };
}

/** CPU seconds a process has used (all its threads); 0 once it has gone (a closed backend). */
function processCpuSeconds(pid: number): Promise<number> {
  return cpuSeconds(pid).catch(() => 0);
}

interface CpuReading {
  metering: number;
  postgres: number;
  redis: number;
  bench: number;
}

/**
 * CPU used so far by each part: the metering process, the Postgres backends serving the
 * bench database, the Redis server (shared: other clients' work is included), this process.
 */
async function readCpu(meteringPid: number, databaseUrl: string, redisPid: number | null) {
  const backends = await query<{ pid: number }>(
    databaseUrl,
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
  const postgres = await Promise.all(backends.map((b) => processCpuSeconds(b.pid)));
  const own = process.cpuUsage();
  return {
    metering: await processCpuSeconds(meteringPid),
    postgres: postgres.reduce((a, b) => a + b, 0),
    redis: redisPid === null ? 0 : await processCpuSeconds(redisPid),
    bench: (own.user + own.system) / 1e6,
  } satisfies CpuReading;
}

function rate(count: number, ms: number): number {
  return ms > 0 ? Math.round((count / ms) * 1000) : 0;
}

async function main(): Promise<void> {
  const env = loadEnvironment(StoreEnv);
  const database = await createTestDatabase(env.DATABASE_URL);
  const prefix = `bench${randomBytes(3).toString('hex')}`;
  const connection = new QueueConnection(busConnectionOf({ ...env, REDIS_PREFIX: prefix }));
  const queue = UsageQueue.open(connection);
  let app: AppProcess | undefined;
  try {
    const { tokens, channels } = await seed(database.url);
    app = await startApp('metering', {
      env: { DATABASE_URL: database.url, REDIS_PREFIX: prefix, LOG_LEVEL: 'warn', ...APP_ENV },
      readyPath: '/readyz',
      timeoutMs: 60_000,
      nodeFlags: [...METERING_NODE_FLAGS],
    });
    const metricsUrl = `${app.url}/metrics`;
    await sleep(1_000);
    const redisPid = await redisServerPid(env.REDIS_URL);
    const meteringPid = app.child.pid ?? 0;
    const cpuBefore = await readCpu(meteringPid, database.url, redisPid);

    const samples: Sample[] = [];
    const started = Date.now();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const at = Date.now();
        try {
          const metrics = parseMetrics(await (await fetch(metricsUrl)).text());
          samples.push({ t: at - started, ...metrics });
        } catch {
          // a scrape that fails is a missing sample, not a failed run
        }
        await sleep(Math.max(0, SAMPLE_MS - (Date.now() - at)));
      }
    })();

    // The burst: RECORDS requests that arrive now, enqueued in batch jobs.
    let next = 0;
    const pushBatch = async () => {
      while (next < RECORDS) {
        const from = next;
        next = Math.min(RECORDS, next + BATCH);
        const now = Date.now();
        const records: UsageRecord[] = [];
        for (let index = from; index < next; index += 1) {
          const channel = channels[index % channels.length]!;
          const record: UsageRecord = {
            requestId: `bench-${index}`,
            tokenId: tokens[index % tokens.length]!,
            channelId: channel.id,
            keyId: channel.keys[index % channel.keys.length]!,
            endpoint: 'chat.completions',
            model: MODELS[index % MODELS.length]!,
            upstreamModel: null,
            stream: index % 3 === 0,
            status: 200,
            errorCode: null,
            usage: { promptTokens: 200 + (index % 1_800), completionTokens: 50 + (index % 950) },
            latencyMs: 300 + (index % 5_000),
            firstByteMs: 120,
            attempts: 1,
            clientIp: '10.0.0.1',
            requestedAt: now,
          };
          records.push(record);
        }
        await queue.addBatch(records);
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, pushBatch));
    const burstMs = Date.now() - started;

    const deadline = started + TIMEOUT_MS;
    while ((samples.at(-1)?.settled ?? 0) < RECORDS && Date.now() < deadline) await sleep(100);
    const cpuAfter = await readCpu(meteringPid, database.url, redisPid);
    const meteringPeakMemoryMiB = Math.round(await peakMemoryMiB(meteringPid));
    // A few more samples so the lag is seen back at zero.
    await sleep(3 * SAMPLE_MS);
    sampling = false;
    await sampler;

    const [check] = await query<{ rows: number; cost: string; quota: string }>(
      database.url,
      `SELECT (SELECT count(*)::int FROM "UsageLog") AS "rows",
              (SELECT sum("cost")::text FROM "UsageLog") AS "cost",
              (SELECT sum("usedQuota")::text FROM "Token") AS "quota"`,
    );
    const reached = (count: number) => samples.find((s) => s.settled >= count)?.t;
    const t10 = reached(RECORDS * 0.1);
    const t90 = reached(RECORDS * 0.9);
    const tAll = reached(RECORDS);
    const lagBack = samples.find((s) => s.t >= burstMs && s.lagSeconds < 1);
    const maxLag = Math.max(...samples.map((s) => s.lagSeconds));
    const result = {
      records: RECORDS,
      machine: { cpus: cpus().length, loadAverage: loadavg().map((l) => Number(l.toFixed(2))) },
      appEnv: APP_ENV,
      burst: { ms: burstMs, recordsPerSecond: rate(RECORDS, burstMs) },
      settle: {
        allSettledMs: tAll ?? null,
        sustainedRecordsPerSecond:
          t10 !== undefined && t90 !== undefined ? rate(RECORDS * 0.8, t90 - t10) : null,
        overallRecordsPerSecond: tAll !== undefined ? rate(RECORDS, tAll) : null,
      },
      lag: {
        maxSeconds: Number(maxLag.toFixed(2)),
        backUnderOneSecondMsAfterBurst: lagBack ? lagBack.t - burstMs : null,
      },
      cpuMicrosecondsPerRecord: Object.fromEntries(
        (Object.keys(cpuAfter) as (keyof CpuReading)[]).map((part) => [
          part,
          Math.round(((cpuAfter[part] - cpuBefore[part]) * 1e6) / RECORDS),
        ]),
      ) as Record<keyof CpuReading, number>,
      meteringPeakMemoryMiB,
      database: {
        rows: check?.rows ?? 0,
        costSum: check?.cost ?? null,
        usedQuotaSum: check?.quota ?? null,
        consistent: check?.rows === RECORDS && check.cost === check.quota,
      },
      samples,
      timeline: samples
        .filter((_, index) => index % Math.max(1, Math.round(1000 / SAMPLE_MS)) === 0)
        .map((s) => ({
          s: Number((s.t / 1000).toFixed(1)),
          settled: s.settled,
          lag: Number(s.lagSeconds.toFixed(2)),
          depth: s.depth,
        })),
    };
    report(result);
    if (values.out) await writeFile(values.out, `${JSON.stringify(result, null, 2)}\n`);
    if (!result.database.consistent) process.exitCode = 1;
  } finally {
    await app?.stop('SIGTERM');
    await queue.close();
    await clearRedisNamespace(env.REDIS_URL, prefix);
    await database.drop();
  }
}

/** The Redis server's pid when it runs on this machine (INFO server), for CPU accounting. */
async function redisServerPid(redisUrl: string): Promise<number | null> {
  const redis = new Redis(redisUrl);
  const info = await redis.info('server').finally(() => redis.disconnect());
  const pid = /process_id:(\d+)/.exec(info)?.[1];
  const local = /tcp_port:/.test(info) && (await processCpuSeconds(Number(pid))) > 0;
  return pid && local ? Number(pid) : null;
}

function report(result: {
  records: number;
  cpuMicrosecondsPerRecord: Record<keyof CpuReading, number>;
  meteringPeakMemoryMiB: number;
  burst: { ms: number; recordsPerSecond: number };
  settle: {
    allSettledMs: number | null;
    sustainedRecordsPerSecond: number | null;
    overallRecordsPerSecond: number | null;
  };
  lag: { maxSeconds: number; backUnderOneSecondMsAfterBurst: number | null };
  database: { rows: number; consistent: boolean };
  machine: { cpus: number; loadAverage: number[] };
  timeline: { s: number; settled: number; lag: number; depth: number }[];
}): void {
  const lines = [
    `metering benchmark: ${result.records} usage records in batches of ${BATCH}, ${result.machine.cpus} CPUs, load ${result.machine.loadAverage.join(' ')}`,
    `  burst (batch jobs):       ${result.burst.ms} ms, ${result.burst.recordsPerSecond} records/s`,
    `  all settled after:        ${result.settle.allSettledMs ?? 'not within the timeout'} ms from the burst start`,
    `  sustained settle rate:    ${result.settle.sustainedRecordsPerSecond ?? '-'} records/s (10% to 90% settled)`,
    `  overall settle rate:      ${result.settle.overallRecordsPerSecond ?? '-'} records/s`,
    `  max lag:                  ${result.lag.maxSeconds} s`,
    `  lag < 1 s after burst:    ${result.lag.backUnderOneSecondMsAfterBurst ?? 'never'} ms after the burst ended`,
    `  database:                 ${result.database.rows} rows, totals ${result.database.consistent ? 'consistent' : 'INCONSISTENT'}`,
    `  CPU per record (us):      metering ${result.cpuMicrosecondsPerRecord.metering}, postgres ${result.cpuMicrosecondsPerRecord.postgres}, redis ${result.cpuMicrosecondsPerRecord.redis} (shared), bench/producer ${result.cpuMicrosecondsPerRecord.bench}`,
    `  metering peak memory:     ${result.meteringPeakMemoryMiB} MiB resident`,
    '  timeline (s, settled, lag s, depth):',
    ...result.timeline.map((s) => `    ${s.s}\t${s.settled}\t${s.lag}\t${s.depth}`),
  ];
  console.log(lines.join('\n'));
}

await main();
