import { Inject, Injectable } from '@nestjs/common';
import { SQL_POOL, type SqlPool, type TokenStatus } from '@switchyard/db/sql';
import { quotaSpentSql, UNIT_MULTIPLIER, type BudgetPeriodName } from '@switchyard/domain';

// Every read of the `Token` table the edge makes. Plain SQL rather than the Prisma client,
// as for every query of the edge (see libs/db/src/sql). Quotas are bigint, read as text:
// micro-dollars fit a JavaScript number exactly up to some nine billion dollars.

export interface TokenRow {
  id: number;
  keyHash: string;
  status: TokenStatus;
  expiresAt: Date | null;
  quotaSpent: boolean;
  hasQuota: boolean;
  quota: string | null;
  models: string[];
  allowIps: string[];
  group: string;
  rateLimit: number | null;
  teamId: number | null;
  ownerId: number | null;
  /** The team's price group multiplier (ppm); the `default` group's for a token without a team. */
  priceMultiplier: number;
  /** For a team on a balance: balance + debited, the balance's spend ledger limit; else null. */
  balanceLimit: string | null;
  /** Its bodies go to the request log: its own flag or its team's (request-log/). */
  requestLog: boolean;
}

export interface BudgetRow {
  subject: string;
  amount: string;
  period: BudgetPeriodName;
  softPercent: number | null;
}

// The price group rule (docs/budgets.md, "The model"): a token's requests are priced by
// its team's group; a token without a team by the group named `default`; a group that does
// not exist multiplies by one.
const FIND_BY_HASH = `
  SELECT t.id, t."keyHash", t.status, t."expiresAt", t.models, t."allowIps", t."group",
         t."rateLimit", t.quota::text AS quota,
         ${quotaSpentSql('t')} AS "quotaSpent",
         t.quota IS NOT NULL AS "hasQuota",
         t."teamId", t."ownerId",
         coalesce(pg.multiplier, ${UNIT_MULTIPLIER}) AS "priceMultiplier",
         CASE WHEN tm.billing = 'balance' THEN (tm.balance + tm.debited)::text END AS "balanceLimit",
         (t."requestLog" OR coalesce(tm."requestLog", false)) AS "requestLog"
    FROM "Token" t
    LEFT JOIN "Team" tm ON tm.id = t."teamId"
    LEFT JOIN "PriceGroup" pg ON pg.name = coalesce(tm."priceGroup", 'default')
   WHERE t."keyHash" = $1`;

const BUDGETS = `
  SELECT subject, amount::text AS amount, period::text AS period, "softPercent"
    FROM "Budget" WHERE subject = ANY($1::text[])`;

const BUDGET_SPENT = `
  SELECT s.subject, s."periodStart", s.spent::text AS spent
    FROM "BudgetSpend" s
    JOIN unnest($1::text[], $2::timestamptz[]) AS k(subject, "periodStart")
      ON k.subject = s.subject AND k."periodStart" = s."periodStart"`;

const DEBITED = `SELECT id, debited::text AS debited FROM "Team" WHERE id = ANY($1::int[])`;

const USED_QUOTAS = `SELECT id, "usedQuota"::text AS used FROM "Token" WHERE id = ANY($1::int[])`;

@Injectable()
export class TokensRepository {
  constructor(@Inject(SQL_POOL) private readonly pool: SqlPool) {}

  async findByHash(keyHash: string): Promise<TokenRow | undefined> {
    return (await this.pool.query<TokenRow>(FIND_BY_HASH, [keyHash])).rows[0];
  }

  /** The budgets among `subjects` (those covering a token, docs/budgets.md). */
  async budgets(subjects: string[]): Promise<BudgetRow[]> {
    return (await this.pool.query<BudgetRow>(BUDGETS, [subjects])).rows;
  }

  /** What budget subjects spent in periods, as committed by metering (absent: nothing yet). */
  async budgetSpent(
    periods: { subject: string; periodStart: Date }[],
  ): Promise<Map<string, number>> {
    const { rows } = await this.pool.query<{ subject: string; periodStart: Date; spent: string }>(
      BUDGET_SPENT,
      [periods.map((p) => p.subject), periods.map((p) => p.periodStart.toISOString())],
    );
    return new Map(
      rows.map((row) => [`${row.subject}@${row.periodStart.getTime()}`, Number(row.spent)]),
    );
  }

  /** What requests have debited from teams' balances, ever, by team id. */
  async debited(teamIds: number[]): Promise<Map<number, number>> {
    const { rows } = await this.pool.query<{ id: number; debited: string }>(DEBITED, [teamIds]);
    return new Map(rows.map((row) => [row.id, Number(row.debited)]));
  }

  /** What each token has spent as committed by metering, by id (absent: no such token). */
  async usedQuotas(ids: number[]): Promise<Map<number, number>> {
    const { rows } = await this.pool.query<{ id: number; used: string }>(USED_QUOTAS, [ids]);
    return new Map(rows.map((row) => [row.id, Number(row.used)]));
  }
}
