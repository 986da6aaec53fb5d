import { Injectable } from '@nestjs/common';
import { type SqlClient } from '@switchyard/db/sql';
import { UNIT_MULTIPLIER, type BudgetPeriodName } from '@switchyard/domain';

// Metering's writes to the budget tables, inside its settlement transaction (the one that
// writes the usage rows, so spend, ledger and usage are committed together or not at all):
// per-period spend, balance debits, and the claim of a soft alert with its audit entry
// (docs/budgets.md). Rows are locked in one order within a settlement (BudgetSpend by
// subject and period, Team by id, Budget by id), after the token, channel and key counters,
// so concurrent batches wait for each other instead of deadlocking.

/** Who pays for a token's requests, and at which price group multiplier. */
export interface TokenCover {
  tokenId: number;
  teamId: number | null;
  ownerId: number | null;
  /** True for a team on a prepaid balance. */
  balance: boolean;
  /** Parts per million of the model price. */
  multiplier: number;
}

export interface CoveringBudget {
  id: number;
  subject: string;
  period: BudgetPeriodName;
  amount: bigint;
  softPercent: number | null;
  alertedFor: Date | null;
}

/** A budget and what its current period has spent. */
export interface BudgetUse {
  subject: string;
  period: BudgetPeriodName;
  amount: bigint;
  softPercent: number | null;
  spent: bigint;
}

/** One subject's spend added in one period. */
export interface SpendAddition {
  subject: string;
  periodStart: Date;
  cost: bigint;
}

export interface PeriodSpend {
  subject: string;
  periodStart: Date;
  /** The period's spend once committed, this settlement included. */
  spent: bigint;
}

export interface BalanceDebit {
  teamId: number;
  requestId: string;
  /** Micro-dollars, positive. */
  amount: bigint;
}

export interface TeamDebited {
  teamId: number;
  /** Everything requests have debited from the team, this settlement included. */
  debited: bigint;
}

const COVER_OF = `
  SELECT t.id AS "tokenId", t."teamId", t."ownerId", tm.billing = 'balance' AS balance,
         coalesce(pg.multiplier, ${UNIT_MULTIPLIER}) AS multiplier
    FROM "Token" t
    LEFT JOIN "Team" tm ON tm.id = t."teamId"
    LEFT JOIN "PriceGroup" pg ON pg.name = coalesce(tm."priceGroup", 'default')
   WHERE t.id = ANY($1::int[])`;

const BUDGETS_FOR = `
  SELECT id, subject, period::text AS period, amount::text AS amount, "softPercent", "alertedFor"
    FROM "Budget" WHERE subject = ANY($1::text[])`;

/**
 * The budgets nearest their amount in their current period, fullest first: what the
 * budget gauges export (docs/budgets.md, "Metrics"). $1..$3: the current day, week and
 * month start in the budgets' zone (period `none` starts at the epoch).
 */
const FULLEST = `
  SELECT b.subject, b.period::text AS period, b.amount::text AS amount, b."softPercent",
         coalesce(s.spent, 0)::text AS spent
    FROM "Budget" b
    LEFT JOIN "BudgetSpend" s ON s.subject = b.subject AND s."periodStart" = CASE b.period
      WHEN 'day' THEN $1::timestamptz WHEN 'week' THEN $2::timestamptz
      WHEN 'month' THEN $3::timestamptz ELSE 'epoch'::timestamptz END
   WHERE b.amount > 0
   ORDER BY coalesce(s.spent, 0)::float8 / b.amount DESC, b.subject
   LIMIT $4`;

/** Adds to each (subject, period) in key order; returns the spend after, for every one given. */
const ADD_SPEND = `
  WITH d AS (
    SELECT x->>0 AS subject, (x->>1)::timestamptz AS "periodStart", (x->>2)::bigint AS cost
      FROM jsonb_array_elements($1::jsonb) x
  )
  INSERT INTO "BudgetSpend" AS b (subject, "periodStart", spent, "updatedAt")
  SELECT subject, "periodStart", cost, CURRENT_TIMESTAMP FROM d ORDER BY subject, "periodStart"
  ON CONFLICT (subject, "periodStart")
    DO UPDATE SET spent = b.spent + excluded.spent, "updatedAt" = CURRENT_TIMESTAMP
  RETURNING subject, "periodStart", spent::text AS spent`;

/**
 * One ledger row per request (its id unique: a redelivered request is debited once), each
 * with the balance after it in the batch's order, and the teams' balance and debited total
 * moved by what was inserted. Teams are locked first, in id order.
 */
const DEBIT = `
  WITH d AS (
    SELECT (x->>0)::int AS "teamId", x->>1 AS "requestId", (x->>2)::bigint AS amount, position
      FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS e(x, position)
  ),
  locked AS MATERIALIZED (
    SELECT id, balance, debited FROM "Team"
     WHERE id IN (SELECT "teamId" FROM d) ORDER BY id FOR NO KEY UPDATE
  ),
  fresh AS (
    SELECT d.* FROM d
     WHERE NOT EXISTS (SELECT 1 FROM "BalanceEntry" b WHERE b."requestId" = d."requestId")
  ),
  inserted AS (
    INSERT INTO "BalanceEntry" ("teamId", kind, amount, "balanceAfter", reason, "requestId")
    SELECT f."teamId", 'debit', -f.amount,
           l.balance - sum(f.amount) OVER (PARTITION BY f."teamId" ORDER BY f.position),
           'request', f."requestId"
      FROM fresh f JOIN locked l ON l.id = f."teamId"
     ORDER BY f.position
    ON CONFLICT ("requestId") DO NOTHING
    RETURNING "teamId", -amount AS amount
  ),
  totals AS (SELECT "teamId", sum(amount) AS amount FROM inserted GROUP BY "teamId"),
  moved AS (
    UPDATE "Team" t SET balance = t.balance - s.amount, debited = t.debited + s.amount
      FROM totals s WHERE t.id = s."teamId"
  )
  SELECT l.id AS "teamId", (l.debited + coalesce(s.amount, 0))::text AS debited
    FROM locked l LEFT JOIN totals s ON s."teamId" = l.id`;

/**
 * Claims a budget's soft alert for a period: one settlement wins, whatever runs at once (the
 * row lock makes a concurrent one re-read `alertedFor` and find it claimed).
 */
const CLAIM_ALERT = `
  UPDATE "Budget" SET "alertedFor" = $2
   WHERE id = $1 AND ("alertedFor" IS NULL OR "alertedFor" < $2)
  RETURNING id`;

const AUDIT_ALERT = `
  INSERT INTO "AuditLog" ("actorName", action, "targetType", "targetId", details)
  VALUES ('metering', 'budget.soft_alert', 'budget', $1, $2::jsonb)`;

@Injectable()
export class BudgetCounters {
  /** Team, owner and price multiplier of each token (absent: the token was deleted). */
  async coverOf(client: SqlClient, tokenIds: number[]): Promise<Map<number, TokenCover>> {
    if (tokenIds.length === 0) return new Map();
    const { rows } = await client.query<TokenCover & { balance: boolean | null }>({
      name: 'budget-counters.cover-of',
      text: COVER_OF,
      values: [tokenIds],
    });
    return new Map(rows.map((row) => [row.tokenId, { ...row, balance: row.balance === true }]));
  }

  /** The budgets among `subjects`, by subject. */
  async budgetsFor(client: SqlClient, subjects: string[]): Promise<Map<string, CoveringBudget>> {
    if (subjects.length === 0) return new Map();
    const { rows } = await client.query<{
      id: number;
      subject: string;
      period: BudgetPeriodName;
      amount: string;
      softPercent: number | null;
      alertedFor: Date | null;
    }>({ name: 'budget-counters.budgets-for', text: BUDGETS_FOR, values: [subjects] });
    return new Map(
      rows.map((row) => [row.subject, { ...row, amount: BigInt(row.amount) }] as const),
    );
  }

  /**
   * The `limit` budgets that have spent the largest share of their amount in their current
   * period, given the starts of the current day, week and month.
   */
  async fullest(
    client: SqlClient,
    starts: { day: Date; week: Date; month: Date },
    limit: number,
  ): Promise<BudgetUse[]> {
    const { rows } = await client.query<{
      subject: string;
      period: BudgetPeriodName;
      amount: string;
      softPercent: number | null;
      spent: string;
    }>({
      name: 'budget-counters.fullest',
      text: FULLEST,
      values: [starts.day, starts.week, starts.month, limit],
    });
    return rows.map((row) => ({ ...row, amount: BigInt(row.amount), spent: BigInt(row.spent) }));
  }

  /** Adds spend to periods (an addition of 0 reads the spend); returns every period's spend after. */
  async addSpend(client: SqlClient, additions: SpendAddition[]): Promise<PeriodSpend[]> {
    if (additions.length === 0) return [];
    const { rows } = await client.query<{ subject: string; periodStart: Date; spent: string }>({
      name: 'budget-counters.add-spend',
      text: ADD_SPEND,
      values: [
        JSON.stringify(
          additions.map((a) => [a.subject, a.periodStart.toISOString(), a.cost.toString()]),
        ),
      ],
    });
    return rows.map((row) => ({ ...row, spent: BigInt(row.spent) }));
  }

  /** Debits balances, once per request; returns each team's debited total after. */
  async debit(client: SqlClient, debits: BalanceDebit[]): Promise<TeamDebited[]> {
    if (debits.length === 0) return [];
    const { rows } = await client.query<{ teamId: number; debited: string }>({
      name: 'budget-counters.debit',
      text: DEBIT,
      values: [JSON.stringify(debits.map((d) => [d.teamId, d.requestId, d.amount.toString()]))],
    });
    return rows.map((row) => ({ teamId: row.teamId, debited: BigInt(row.debited) }));
  }

  /**
   * Claims the soft alert of a budget for the period starting at `periodStart`, and audits
   * it: true for the one settlement that fires it.
   */
  async claimSoftAlert(
    client: SqlClient,
    budget: CoveringBudget,
    periodStart: Date,
    spent: bigint,
  ): Promise<boolean> {
    const { rowCount } = await client.query({
      name: 'budget-counters.claim-alert',
      text: CLAIM_ALERT,
      values: [budget.id, periodStart.toISOString()],
    });
    if (!rowCount) return false;
    await client.query({
      name: 'budget-counters.audit-alert',
      text: AUDIT_ALERT,
      values: [
        String(budget.id),
        JSON.stringify({
          subject: budget.subject,
          period: budget.period,
          periodStart: periodStart.toISOString(),
          amount: budget.amount.toString(),
          spent: spent.toString(),
          softPercent: budget.softPercent,
        }),
      ],
    });
    return true;
  }
}
