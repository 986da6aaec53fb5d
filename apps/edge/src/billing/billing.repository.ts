import { Inject, Injectable } from '@nestjs/common';
import { SQL_POOL, type SqlPool } from '@switchyard/db/sql';

// The reads behind a token's own view of its spending (billing.controller.ts): the token
// with its team, and what the budgets covering it spent. The budgets themselves are the
// token directory's, the ones the edge enforces. Plain SQL like every query of the
// edge (libs/db/src/sql); money is bigint, read as text.

export interface KeyRow {
  id: number;
  name: string;
  lastFour: string;
  status: string;
  expiresAt: Date | null;
  quota: string | null;
  usedQuota: string;
  models: string[];
  group: string;
  rateLimit: number | null;
  createdAt: Date;
  teamId: number | null;
  ownerId: number | null;
  teamName: string | null;
  teamModels: string[] | null;
  teamRateLimit: number | null;
  teamBilling: 'budget' | 'balance' | null;
  teamBalance: string | null;
}

export interface SpendRow {
  subject: string;
  periodStart: Date;
  spent: string;
}

const KEY = `
  SELECT t.id, t.name, t."lastFour", t.status::text AS status, t."expiresAt",
         t.quota::text AS quota, t."usedQuota"::text AS "usedQuota", t.models, t."group",
         t."rateLimit", t."createdAt", t."teamId", t."ownerId",
         team.name AS "teamName", team.models AS "teamModels",
         team."rateLimit" AS "teamRateLimit", team.billing::text AS "teamBilling",
         team.balance::text AS "teamBalance"
    FROM "Token" t
    LEFT JOIN "Team" team ON team.id = t."teamId"
   WHERE t.id = $1`;

/** Rows of each subject in any of the periods asked; the caller pairs them. */
const SPENDS = `
  SELECT subject, "periodStart", spent::text AS spent
    FROM "BudgetSpend"
   WHERE subject = ANY($1::text[]) AND "periodStart" = ANY($2::timestamptz[])`;

@Injectable()
export class BillingRepository {
  constructor(@Inject(SQL_POOL) private readonly pool: SqlPool) {}

  async key(tokenId: number): Promise<KeyRow | undefined> {
    return (await this.pool.query<KeyRow>(KEY, [tokenId])).rows[0];
  }

  async spends(subjects: string[], periodStarts: Date[]): Promise<SpendRow[]> {
    if (subjects.length === 0) return [];
    return (await this.pool.query<SpendRow>(SPENDS, [subjects, periodStarts])).rows;
  }
}
