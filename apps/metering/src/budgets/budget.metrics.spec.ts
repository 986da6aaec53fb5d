import { randomInt } from 'node:crypto';
import { periodSpan, type BudgetPeriodName } from '@switchyard/domain';
import { query } from '@switchyard/testing';
import {
  databaseUrl,
  dropNamespace,
  fileNamespace,
  meteringEnv,
  metric,
  startMetering,
  type RunningMetering,
} from '../testing/metering.fixture.js';

// The budget gauges (docs/budgets.md, "Metrics"): each budget's current period, read from
// BudgetSpend at scrape, in the zone metering counts periods in; a past period's spend
// counts for nothing, and a deleted budget loses its series.

const ZONE = 'Europe/Berlin';

async function budget(
  period: BudgetPeriodName,
  amount: number,
  softPercent: number | null,
): Promise<string> {
  const subject = `token:${randomInt(1_000_000_000, 2_000_000_000)}`;
  await query(
    databaseUrl(),
    `INSERT INTO "Budget" (subject, level, amount, period, "softPercent", "updatedAt")
     VALUES ($1, 'token', $2, $3::"BudgetPeriod", $4, now())`,
    [subject, amount, period, softPercent],
  );
  return subject;
}

async function spent(subject: string, periodStart: Date, amount: number): Promise<void> {
  await query(
    databaseUrl(),
    `INSERT INTO "BudgetSpend" (subject, "periodStart", spent, "updatedAt") VALUES ($1, $2, $3, now())`,
    [subject, periodStart, amount],
  );
}

describe('metering: budget gauges', () => {
  let metering: RunningMetering;

  beforeAll(async () => {
    metering = await startMetering(meteringEnv(fileNamespace(), { BUDGET_TIME_ZONE: ZONE }));
  });

  afterAll(async () => {
    await metering?.close();
    if (metering) await dropNamespace(metering.env);
  });

  it("export each budget's share spent in its current period and its soft threshold", async () => {
    const day = periodSpan('day', new Date(), ZONE);
    const month = periodSpan('month', new Date(), ZONE);
    const daily = await budget('day', 1_000, 80);
    await spent(daily, day.start, 850);
    // Yesterday's spend, in the zone's day before: not this period's.
    await spent(daily, new Date(day.start.getTime() - 3_600_000 * 12), 999);
    const monthly = await budget('month', 2_000, null);
    await spent(monthly, month.start, 2_500);
    const lifetime = await budget('none', 100, 50);

    const ratio = (subject: string, period: string) =>
      metric(metering.url, 'gateway_budget_spent_ratio', { subject, period });
    const soft = (subject: string, period: string) =>
      metric(metering.url, 'gateway_budget_soft_ratio', { subject, period });
    expect(await ratio(daily, 'day')).toBe(0.85);
    expect(await soft(daily, 'day')).toBe(0.8);
    // Past its cap (the last request's partial hold may take it there): more than 1.
    expect(await ratio(monthly, 'month')).toBe(1.25);
    expect(await soft(monthly, 'month')).toBeUndefined();
    expect(await ratio(lifetime, 'none')).toBe(0);
    expect(await soft(lifetime, 'none')).toBe(0.5);

    await query(databaseUrl(), `DELETE FROM "Budget" WHERE subject = $1`, [daily]);
    expect(await ratio(daily, 'day')).toBeUndefined();
    expect(await soft(daily, 'day')).toBeUndefined();
    expect(await ratio(monthly, 'month')).toBe(1.25);
  });
});
