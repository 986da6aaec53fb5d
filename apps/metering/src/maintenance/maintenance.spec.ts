import { getQueueToken } from '@nestjs/bullmq';
import { MaintenanceJobs, Queues } from '@switchyard/contracts';
import { loadEnvironment, MeteringEnv } from '@switchyard/config';
import { type TypedQueue } from '@switchyard/messaging';
import { waitFor, query } from '@switchyard/testing';
import {
  createChannel,
  createToken,
  databaseUrl,
  dropNamespace,
  fileNamespace,
  meteringEnv,
  startMetering,
  type RunningMetering,
} from '../testing/metering.fixture.js';
import { MAINTENANCE_SCHEDULES, MaintenanceProcessor } from './maintenance.processor.js';
import { MaintenanceRepository } from './maintenance.repository.js';
import { MaintenanceService } from './maintenance.service.js';

// Roll-ups and retention over logs written straight into the run's database. The logs
// of this file live in January 2001, so no other spec file's rows are ever touched.

const NOW = new Date('2001-01-10T15:00:00Z');

interface Log {
  at: string;
  tokenId: number | null;
  channelId: number | null;
  model: string;
  status?: number;
  prompt: number;
  completion: number;
  cost: number;
}

let sequence = 0;

async function insertLogs(logs: Log[]): Promise<void> {
  for (const log of logs) {
    sequence += 1;
    await query(
      databaseUrl(),
      `INSERT INTO "UsageLog" ("requestId", "tokenId", "channelId", "endpoint", "model",
         "promptTokens", "completionTokens", "cost", "status", "latencyMs", "requestedAt")
       VALUES ($1, $2, $3, 'chat.completions', $4, $5, $6, $7, $8, 10, $9)`,
      [
        `maint-${process.pid}-${sequence}`,
        log.tokenId,
        log.channelId,
        log.model,
        log.prompt,
        log.completion,
        log.cost,
        log.status ?? 200,
        log.at,
      ],
    );
  }
}

interface DailyRow {
  day: string;
  tokenId: number;
  channelId: number;
  model: string;
  requests: number;
  failures: number;
  promptTokens: string;
  completionTokens: string;
  cost: string;
}

async function daily(from: string, to: string): Promise<DailyRow[]> {
  return query<DailyRow>(
    databaseUrl(),
    `SELECT to_char("day", 'YYYY-MM-DD') AS "day", "tokenId", "channelId", "model", "requests",
            "failures", "promptTokens"::text AS "promptTokens",
            "completionTokens"::text AS "completionTokens", "cost"::text AS "cost"
     FROM "UsageDaily" WHERE "day" BETWEEN $1::date AND $2::date
     ORDER BY "day", "tokenId", "channelId", "model"`,
    [from, to],
  );
}

/** A log of no token or channel, whose roll-ups no deleted token changes. */
const M3 = { tokenId: null, channelId: null, model: 'm3', prompt: 1, completion: 1 };

async function partitionOf(at: string): Promise<string | undefined> {
  const [row] = await query<{ partition: string }>(
    databaseUrl(),
    `SELECT tableoid::regclass::text AS "partition" FROM "UsageLog" WHERE "requestedAt" = $1`,
    [at],
  );
  return row?.partition;
}

async function logCount(before: string): Promise<number> {
  const [row] = await query<{ n: number }>(
    databaseUrl(),
    `SELECT count(*)::int AS "n" FROM "UsageLog" WHERE "requestedAt" < $1`,
    [before],
  );
  return row?.n ?? -1;
}

describe('usage maintenance', () => {
  let metering: RunningMetering;
  let maintenance: MaintenanceService;
  let tokenA: number;
  let tokenB: number;
  let channel: number;

  beforeAll(async () => {
    metering = await startMetering(meteringEnv(fileNamespace(), { USAGE_LOG_RETENTION_DAYS: '2' }));
    maintenance = metering.app.get(MaintenanceService);
    tokenA = (await createToken(null)).id;
    tokenB = (await createToken(null)).id;
    channel = (await createChannel(0)).id;
    await insertLogs([
      // 2001-01-07 and 08: older than the retention of two days at NOW.
      {
        at: '2001-01-07T10:00:00Z',
        tokenId: tokenA,
        channelId: channel,
        model: 'm1',
        prompt: 1,
        completion: 2,
        cost: 3,
      },
      {
        at: '2001-01-07T23:59:59.999Z',
        tokenId: tokenA,
        channelId: channel,
        model: 'm1',
        prompt: 10,
        completion: 20,
        cost: 30,
        status: 502,
      },
      {
        at: '2001-01-08T00:00:00Z',
        tokenId: tokenB,
        channelId: null,
        model: 'm2',
        prompt: 5,
        completion: 5,
        cost: 7,
      },
      // 2001-01-09 (yesterday) and 10 (today).
      {
        at: '2001-01-09T08:00:00Z',
        tokenId: tokenA,
        channelId: channel,
        model: 'm1',
        prompt: 100,
        completion: 200,
        cost: 300,
      },
      {
        at: '2001-01-09T09:00:00Z',
        tokenId: tokenA,
        channelId: channel,
        model: 'm1',
        prompt: 1,
        completion: 1,
        cost: 1,
        status: 429,
      },
      {
        at: '2001-01-09T10:00:00Z',
        tokenId: null,
        channelId: null,
        model: 'm1',
        prompt: 4,
        completion: 4,
        cost: 4,
      },
      {
        at: '2001-01-10T01:00:00Z',
        tokenId: tokenB,
        channelId: channel,
        model: 'm2',
        prompt: 50,
        completion: 60,
        cost: 70,
      },
      {
        at: '2001-01-10T02:00:00Z',
        tokenId: tokenB,
        channelId: channel,
        model: 'm2',
        prompt: 50,
        completion: 60,
        cost: 70,
      },
    ]);
  });

  afterAll(async () => {
    await metering?.close();
    if (metering) await dropNamespace(metering.env);
  });

  it('rolls yesterday and today up per day, token, channel and model', async () => {
    const result = await maintenance.rollUpRecent(NOW);
    expect(result).toMatchObject({ from: '2001-01-09', to: '2001-01-10', upserted: 3, removed: 0 });
    expect(await daily('2001-01-01', '2001-01-31')).toEqual([
      {
        day: '2001-01-09',
        tokenId: 0,
        channelId: 0,
        model: 'm1',
        requests: 1,
        failures: 0,
        promptTokens: '4',
        completionTokens: '4',
        cost: '4',
      },
      {
        day: '2001-01-09',
        tokenId: tokenA,
        channelId: channel,
        model: 'm1',
        requests: 2,
        failures: 1,
        promptTokens: '101',
        completionTokens: '201',
        cost: '301',
      },
      {
        day: '2001-01-10',
        tokenId: tokenB,
        channelId: channel,
        model: 'm2',
        requests: 2,
        failures: 0,
        promptTokens: '100',
        completionTokens: '120',
        cost: '140',
      },
    ]);
  });

  it('recomputes instead of adding up, and follows logs whose token was deleted', async () => {
    await insertLogs([
      {
        at: '2001-01-10T03:00:00Z',
        tokenId: tokenB,
        channelId: channel,
        model: 'm2',
        prompt: 1,
        completion: 1,
        cost: 1,
      },
    ]);
    await maintenance.rollUpRecent(NOW);
    await maintenance.rollUpRecent(NOW);
    const today = (await daily('2001-01-10', '2001-01-10'))[0];
    expect(today).toMatchObject({ tokenId: tokenB, requests: 3, cost: '141' });

    await query(databaseUrl(), `DELETE FROM "Token" WHERE "id" = $1`, [tokenB]);
    const result = await maintenance.rollUpRecent(NOW);
    expect(result.removed).toBe(1);
    expect(await daily('2001-01-10', '2001-01-10')).toEqual([
      expect.objectContaining({
        tokenId: 0,
        channelId: channel,
        model: 'm2',
        requests: 3,
        cost: '141',
      }),
    ]);
  });

  it('keeps month partitions ahead, moving strays in', async () => {
    // Rows of months with no partition yet sit in the default one, as after a clock far off
    // (no token or channel: an earlier test deleted one of them).
    await insertLogs([
      { at: '2000-11-15T10:00:00Z', ...M3, cost: 5 },
      { at: '2000-12-31T23:59:59.999Z', ...M3, cost: 6 },
      { at: '2001-02-01T00:00:00Z', ...M3, cost: 7 },
    ]);
    expect(await partitionOf('2000-11-15T10:00:00Z')).toBe('"UsageLog_default"');

    // This month and two ahead; run again, nothing more. The stray of February moves in.
    expect(await maintenance.preparePartitions(NOW)).toEqual([
      '2001-01-01',
      '2001-02-01',
      '2001-03-01',
    ]);
    expect(await maintenance.preparePartitions(NOW)).toEqual([]);
    expect(await partitionOf('2001-02-01T00:00:00Z')).toBe('"UsageLog_2001_02"');
    // Months behind, as the migration makes them for the rows it finds.
    expect(await maintenance.preparePartitions(new Date('2000-11-20T00:00:00Z'))).toEqual([
      '2000-11-01',
      '2000-12-01',
    ]);
    expect(await partitionOf('2000-11-15T10:00:00Z')).toBe('"UsageLog_2000_11"');
    expect(await partitionOf('2000-12-31T23:59:59.999Z')).toBe('"UsageLog_2000_12"');
  });

  it('keeps every log when no retention is set, the default', async () => {
    const keepAll = new MaintenanceService(
      metering.app.get(MaintenanceRepository),
      loadEnvironment(MeteringEnv, {}),
    );
    expect(await keepAll.applyRetention(NOW)).toEqual({
      cutoff: null,
      strays: 0,
      partitionsDropped: [],
    });
    expect(await logCount('2001-01-01T00:00:00Z')).toBe(2);
  });

  it('drops whole months past the retention, each rolled up first, and no part of a month', async () => {
    // Two days before 2001-01-10T15:00 is 2001-01-08: November and December end before it.
    const result = await maintenance.applyRetention(NOW);
    expect(result).toEqual({
      cutoff: '2001-01-08T00:00:00.000Z',
      strays: 0,
      partitionsDropped: [
        {
          name: 'UsageLog_2000_11',
          rolledUp: { from: '2000-11-01', to: '2000-11-30', upserted: 1, removed: 0 },
        },
        {
          name: 'UsageLog_2000_12',
          rolledUp: { from: '2000-12-01', to: '2000-12-31', upserted: 1, removed: 0 },
        },
      ],
    });
    expect(await logCount('2001-01-01T00:00:00Z')).toBe(0);
    // January's logs before the cutoff stay until all of January is past it.
    expect(await logCount('2001-01-08T00:00:00Z')).toBe(2);
    expect(
      (await daily('2000-11-01', '2000-12-31')).map(({ day, cost }) => ({ day, cost })),
    ).toEqual([
      { day: '2000-11-15', cost: '5' },
      { day: '2000-12-31', cost: '6' },
    ]);
    // A second run finds nothing more to drop, and the roll-ups stay.
    expect(await maintenance.applyRetention(NOW)).toMatchObject({ partitionsDropped: [] });
    expect(await daily('2000-11-01', '2000-12-31')).toHaveLength(2);
  });

  it('adds a log arriving for a month already dropped to its day’s roll-up, instead of replacing it', async () => {
    await insertLogs([{ at: '2000-12-31T12:00:00Z', ...M3, cost: 10 }]);
    expect(await partitionOf('2000-12-31T12:00:00Z')).toBe('"UsageLog_default"');
    expect(await maintenance.applyRetention(NOW)).toMatchObject({ strays: 1 });
    expect(await logCount('2001-01-01T00:00:00Z')).toBe(0);
    expect(await daily('2000-12-31', '2000-12-31')).toEqual([
      expect.objectContaining({ requests: 2, cost: '16' }),
    ]);
    // Counted once: a later run has no stray left to add.
    expect(await maintenance.applyRetention(NOW)).toMatchObject({ strays: 0 });
    expect(await daily('2000-12-31', '2000-12-31')).toEqual([
      expect.objectContaining({ requests: 2, cost: '16' }),
    ]);
  });

  it('drops a month once the cutoff passes its end, with the totals of every day in it', async () => {
    const result = await maintenance.applyRetention(new Date('2001-02-05T12:00:00Z'));
    expect(result).toMatchObject({
      cutoff: '2001-02-03T00:00:00.000Z',
      partitionsDropped: [
        { name: 'UsageLog_2001_01', rolledUp: { from: '2001-01-01', to: '2001-01-31' } },
      ],
    });
    expect(await logCount('2001-02-01T00:00:00Z')).toBe(0);
    expect(await partitionOf('2001-02-01T00:00:00Z')).toBe('"UsageLog_2001_02"');
    expect(await daily('2001-01-07', '2001-01-07')).toEqual([
      {
        day: '2001-01-07',
        tokenId: tokenA,
        channelId: channel,
        model: 'm1',
        requests: 2,
        failures: 1,
        promptTokens: '11',
        completionTokens: '22',
        cost: '33',
      },
    ]);
    expect((await daily('2001-01-09', '2001-01-10')).map((row) => row.cost)).toEqual([
      '4',
      '301',
      '141',
    ]);
  });

  it('after an earlier version compacted part of a month, recomputes only the days after', async () => {
    // As the former day-by-day retention leaves it: logs deleted up to 2001-02-02, the
    // roll-up of the 1st final, and one late log of the 1st still there.
    await query(
      databaseUrl(),
      `INSERT INTO "UsageDaily" ("day", "tokenId", "channelId", "model", "requests", "failures",
         "promptTokens", "completionTokens", "cost")
       VALUES ('2001-02-01', 0, 0, 'm3', 5, 0, 5, 5, 100)`,
    );
    await query(
      databaseUrl(),
      `UPDATE "Setting" SET "value" = to_jsonb('2001-02-02T00:00:00.000Z'::text)
       WHERE "key" = 'usage.compacted_before'`,
    );
    await insertLogs([{ at: '2001-02-10T08:00:00Z', ...M3, cost: 9 }]);

    const result = await maintenance.applyRetention(new Date('2001-03-05T12:00:00Z'));
    expect(result).toMatchObject({
      strays: 1,
      partitionsDropped: [
        { name: 'UsageLog_2001_02', rolledUp: { from: '2001-02-02', to: '2001-02-28' } },
      ],
    });
    expect(
      (await daily('2001-02-01', '2001-02-28')).map(({ day, requests, cost }) => ({
        day,
        requests,
        cost,
      })),
    ).toEqual([
      { day: '2001-02-01', requests: 6, cost: '107' },
      { day: '2001-02-10', requests: 1, cost: '9' },
    ]);
  });

  it('reads the former USAGE_RETENTION_DAYS when USAGE_LOG_RETENTION_DAYS is unset', async () => {
    const repository = metering.app.get(MaintenanceRepository);
    const former = new MaintenanceService(
      repository,
      loadEnvironment(MeteringEnv, { USAGE_RETENTION_DAYS: '30' }),
    );
    expect((await former.applyRetention(NOW)).cutoff).toBe('2000-12-11T00:00:00.000Z');
    const both = new MaintenanceService(
      repository,
      loadEnvironment(MeteringEnv, { USAGE_RETENTION_DAYS: '30', USAGE_LOG_RETENTION_DAYS: '5' }),
    );
    expect((await both.applyRetention(NOW)).cutoff).toBe('2001-01-05T00:00:00.000Z');
  });

  it('registers its schedules once however often replicas start, and runs jobs from the queue', async () => {
    // The app's own queue, as @nestjs/bullmq registered it.
    const queue = metering.app.get<TypedQueue<typeof Queues.UsageMaintenance>>(
      getQueueToken(Queues.UsageMaintenance),
    );
    const processor = metering.app.get(MaintenanceProcessor);
    await processor.registerSchedules();
    await processor.registerSchedules();
    const schedulers = await queue.getJobSchedulers();
    expect(schedulers.map((s) => s.key).sort()).toEqual(
      [MAINTENANCE_SCHEDULES.retention, MAINTENANCE_SCHEDULES.rollUp].sort(),
    );
    expect(schedulers.find((s) => s.key === MAINTENANCE_SCHEDULES.rollUp)?.every).toBe(
      metering.env.USAGE_ROLLUP_INTERVAL_MS,
    );

    const job = await queue.add(MaintenanceJobs.RollUp, {});
    const done = await waitFor(async () => {
      const state = await queue.getJob(job.id ?? '');
      return state?.finishedOn ? state : undefined;
    });
    expect(done.failedReason).toBeFalsy();
    expect(done.returnvalue).toMatchObject({ upserted: expect.any(Number) });
  });
});
