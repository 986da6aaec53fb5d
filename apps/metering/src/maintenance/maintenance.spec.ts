import { getQueueToken } from '@nestjs/bullmq';
import { Queues } from '@switchyard/contracts';
import { waitFor, query } from '@switchyard/testing';
import { type Queue } from 'bullmq';
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
import {
  MAINTENANCE_SCHEDULES,
  MaintenanceJobs,
  MaintenanceProcessor,
} from './maintenance.processor.js';
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
    metering = await startMetering(meteringEnv(fileNamespace(), { USAGE_RETENTION_DAYS: '2' }));
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

  it('deletes logs older than the retention by whole days, after rolling those days up', async () => {
    const result = await maintenance.applyRetention(NOW);
    // Two days before 2001-01-10T15:00 is 2001-01-08T15:00: all of the 7th goes, the 8th stays.
    expect(result).toMatchObject({ cutoff: '2001-01-08T00:00:00.000Z', deleted: 2 });
    expect(await logCount('2001-01-08T00:00:00Z')).toBe(0);
    expect(await logCount('2001-01-09T00:00:00Z')).toBe(1);
    expect(await daily('2001-01-07', '2001-01-08')).toEqual([
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
    // A second run finds nothing more to delete, and the roll-up of the 7th stays.
    expect(await maintenance.applyRetention(NOW)).toMatchObject({ deleted: 0, rolledUp: null });
    expect(await daily('2001-01-07', '2001-01-07')).toHaveLength(1);
  });

  it('registers its schedules once however often replicas start, and runs jobs from the queue', async () => {
    // The app's own queue, as @nestjs/bullmq registered it.
    const queue = metering.app.get<Queue>(getQueueToken(Queues.UsageMaintenance));
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
