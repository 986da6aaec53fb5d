import { randomBytes } from 'node:crypto';
import { query } from '@switchyard/testing';
import { type UsageQueue } from '@switchyard/messaging';
import {
  createToken,
  databaseUrl,
  dropNamespace,
  enqueue,
  enqueueOneByOne,
  fileNamespace,
  meteringEnv,
  setPrice,
  settled,
  startMetering,
  usageQueue,
  usageRecord,
  type RunningMetering,
} from '../testing/metering.fixture.js';

// Metering's half of budgets (docs/budgets.md, "Settlement"): in the transaction of the
// usage rows, each budget's period spend, the balance's ledger and the price group's
// multiplier; once per request however often it is delivered; a soft alert once per period
// however many settlements cross it at once.

const MODEL = 'budget-model';
const name = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

async function team(billing: 'budget' | 'balance', priceGroup = 'default'): Promise<number> {
  const [row] = await query<{ id: number }>(
    databaseUrl(),
    `INSERT INTO "Team" (name, billing, "priceGroup", "updatedAt") VALUES ($1, $2, $3, now()) RETURNING id`,
    [name('team'), billing, priceGroup],
  );
  return row!.id;
}

async function teamToken(teamId: number): Promise<number> {
  const token = await createToken(null, name('token'));
  await query(databaseUrl(), `UPDATE "Token" SET "teamId" = $2 WHERE id = $1`, [token.id, teamId]);
  return token.id;
}

async function budget(subject: string, amount: number, softPercent: number | null = null) {
  const [row] = await query<{ id: number }>(
    databaseUrl(),
    `INSERT INTO "Budget" (subject, level, amount, period, "softPercent", "updatedAt")
     VALUES ($1, $2::"BudgetLevel", $3, 'day', $4, now()) RETURNING id`,
    [subject, subject.split(':', 1)[0], amount, softPercent],
  );
  return row!.id;
}

/** An administrator's credit as the admin service books it: ledger row and balance together. */
async function credit(teamId: number, amount: number): Promise<void> {
  await query(
    databaseUrl(),
    `WITH t AS (UPDATE "Team" SET balance = balance + $2 WHERE id = $1 RETURNING balance)
     INSERT INTO "BalanceEntry" ("teamId", kind, amount, "balanceAfter", reason)
     SELECT $1, 'credit', $2, t.balance, 'test credit' FROM t`,
    [teamId, amount],
  );
}

async function books(teamId: number) {
  const [row] = await query<{
    balance: string;
    debited: string;
    ledger: string;
    debits: string;
    debitRows: string;
    last: string;
  }>(
    databaseUrl(),
    `SELECT t.balance::text, t.debited::text,
            (SELECT coalesce(sum(amount), 0) FROM "BalanceEntry" WHERE "teamId" = t.id)::text AS ledger,
            (SELECT coalesce(-sum(amount), 0) FROM "BalanceEntry" WHERE "teamId" = t.id AND kind = 'debit')::text AS debits,
            (SELECT count(*) FROM "BalanceEntry" WHERE "teamId" = t.id AND kind = 'debit')::text AS "debitRows",
            (SELECT "balanceAfter" FROM "BalanceEntry" WHERE "teamId" = t.id ORDER BY id DESC LIMIT 1)::text AS last
       FROM "Team" t WHERE t.id = $1`,
    [teamId],
  );
  return row!;
}

describe('metering: budgets and balances settle with the usage', () => {
  let metering: RunningMetering;
  let queue: UsageQueue;

  beforeAll(async () => {
    // A micro-dollar a prompt token, two a completion token.
    await setPrice(MODEL, 1_000_000, 2_000_000);
    const env = meteringEnv(fileNamespace());
    metering = await startMetering(env);
    queue = usageQueue(env);
  });

  afterAll(async () => {
    await metering?.close();
    await queue?.close();
    if (metering) await dropNamespace(metering.env);
  });

  it("prices by the team's group, adds to each period once, and debits the balance once per request", async () => {
    const group = name('group');
    await query(
      databaseUrl(),
      `INSERT INTO "PriceGroup" (name, multiplier, "updatedAt") VALUES ($1, 1500000, now())`,
      [group],
    );
    const teamId = await team('balance', group);
    await credit(teamId, 10_000);
    const tokenId = await teamToken(teamId);
    await budget(`team:${teamId}`, 1_000_000);
    const day = Date.parse('2026-03-10T12:00:00Z');
    // 101 micro-dollars at the listed price: 151.5, rounded up, in the group.
    const records = [day, day + 1_000, day + 86_400_000].map((requestedAt) =>
      usageRecord({
        tokenId,
        model: MODEL,
        requestedAt,
        usage: { promptTokens: 1, completionTokens: 50 },
      }),
    );
    await settled(queue, await enqueue(queue, records));
    // Delivered again (a spool replay): billed once.
    await settled(queue, await enqueue(queue, records));

    const logs = await query<{ cost: string; priceMultiplier: number; teamId: number }>(
      databaseUrl(),
      `SELECT cost::text, "priceMultiplier", "teamId" FROM "UsageLog" WHERE "tokenId" = $1`,
      [tokenId],
    );
    expect(logs).toEqual(
      Array.from({ length: 3 }, () => ({ cost: '152', priceMultiplier: 1_500_000, teamId })),
    );
    const periods = await query<{ periodStart: Date; spent: string }>(
      databaseUrl(),
      `SELECT "periodStart", spent::text FROM "BudgetSpend" WHERE subject = $1 ORDER BY "periodStart"`,
      [`team:${teamId}`],
    );
    expect(periods).toEqual([
      { periodStart: new Date('2026-03-10T00:00:00Z'), spent: '304' },
      { periodStart: new Date('2026-03-11T00:00:00Z'), spent: '152' },
    ]);
    expect(await books(teamId)).toEqual({
      balance: String(10_000 - 456),
      debited: '456',
      ledger: String(10_000 - 456),
      debits: '456',
      debitRows: '3',
      last: String(10_000 - 456),
    });
  });

  it('keeps a balance equal to its ledger through 1,000 random credits and requests', async () => {
    const teamId = await team('balance');
    const tokens = [await teamToken(teamId), await teamToken(teamId)];
    let seed = 11;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const work: Promise<unknown>[] = [];
    const jobs: string[] = [];
    let pending: ReturnType<typeof usageRecord>[] = [];
    let requests = 0;
    for (let op = 0; op < 1_000; op += 1) {
      if (random() < 0.1) {
        work.push(credit(teamId, 1 + Math.floor(random() * 5_000)));
        continue;
      }
      requests += 1;
      pending.push(
        usageRecord({
          tokenId: tokens[op % 2]!,
          model: MODEL,
          usage: {
            promptTokens: Math.floor(random() * 40),
            completionTokens: Math.floor(random() * 40),
          },
        }),
      );
      if (pending.length === 25) {
        const batch = pending;
        pending = [];
        work.push(enqueue(queue, batch).then((ids) => jobs.push(...ids)));
      }
    }
    work.push(enqueue(queue, pending).then((ids) => jobs.push(...ids)));
    await Promise.all(work);
    await settled(queue, jobs);

    const result = await books(teamId);
    const [billed] = await query<{ rows: string; cost: string }>(
      databaseUrl(),
      `SELECT count(*) FILTER (WHERE cost > 0)::text AS rows, sum(cost)::text AS cost
         FROM "UsageLog" WHERE "tokenId" = ANY($1::int[])`,
      [tokens],
    );
    expect(Number(billed!.rows)).toBeGreaterThan(requests * 0.9);
    expect(result.ledger).toBe(result.balance);
    expect(result.last).toBe(result.balance);
    expect(result.debits).toBe(result.debited);
    expect(result.debited).toBe(billed!.cost);
    expect(result.debitRows).toBe(billed!.rows);
  }, 60_000);
});

describe('metering: soft alerts under concurrent settlements', () => {
  let metering: RunningMetering;
  let queue: UsageQueue;

  beforeAll(async () => {
    await setPrice(MODEL, 1_000_000, 2_000_000);
    // A transaction per record, two at once: settlements that cross the threshold together.
    const env = meteringEnv(fileNamespace(), { USAGE_BATCH_SIZE: '1' });
    metering = await startMetering(env);
    queue = usageQueue(env);
  });

  afterAll(async () => {
    await metering?.close();
    await queue?.close();
    if (metering) await dropNamespace(metering.env);
  });

  it('fires once per period, however many settlements find the threshold crossed', async () => {
    const teamId = await team('budget');
    const tokenId = await teamToken(teamId);
    // Every request alone (101 micro-dollars) is past 10% of the budget.
    const budgetId = await budget(`team:${teamId}`, 1_000, 10);
    const day = Date.parse('2026-04-20T08:00:00Z');
    for (const start of [day, day + 86_400_000]) {
      // A period's settlements run together; the next period's come after them.
      const records = Array.from({ length: 30 }, (_, i) =>
        usageRecord({
          tokenId,
          model: MODEL,
          requestedAt: start + i,
          usage: { promptTokens: 1, completionTokens: 50 },
        }),
      );
      await settled(queue, await enqueueOneByOne(queue, records));
    }

    const alerts = await query<{
      actorName: string;
      details: { periodStart: string; spent: string };
    }>(
      databaseUrl(),
      `SELECT "actorName", details FROM "AuditLog"
        WHERE action = 'budget.soft_alert' AND "targetType" = 'budget' AND "targetId" = $1 ORDER BY id`,
      [String(budgetId)],
    );
    expect(alerts.map((a) => a.details.periodStart).sort()).toEqual([
      '2026-04-20T00:00:00.000Z',
      '2026-04-21T00:00:00.000Z',
    ]);
    expect(alerts.every((a) => a.actorName === 'metering')).toBe(true);
    const [row] = await query<{ alertedFor: Date }>(
      databaseUrl(),
      `SELECT "alertedFor" FROM "Budget" WHERE id = $1`,
      [budgetId],
    );
    expect(row!.alertedFor).toEqual(new Date('2026-04-21T00:00:00Z'));
  }, 60_000);
});
