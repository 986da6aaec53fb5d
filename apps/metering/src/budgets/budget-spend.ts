import { Injectable } from '@nestjs/common';
import { MeteringEnv } from '@switchyard/config';
import { type BudgetAlert } from '@switchyard/contracts';
import { type SqlClient } from '@switchyard/db/sql';
import {
  balanceAccount,
  budgetAccount,
  levelOfSubject,
  periodEnd,
  periodSpan,
  softThresholdReached,
  subjectsCovering,
} from '@switchyard/domain';
import {
  BudgetCounters,
  type BalanceDebit,
  type CoveringBudget,
  type SpendAddition,
  type TokenCover,
} from '@switchyard/gateway-store';
import { type Settlement } from '@switchyard/spend';

// Metering's half of budgets (docs/budgets.md, "Settlement"): inside the transaction that
// writes a batch's usage rows, each billed request's cost is added to the spend of every
// budget covering it, for the period its `requestedAt` falls in, and debited from its
// team's balance when the team runs on one; the committed totals are what the edge's holds
// settle against, and a period whose spend crosses its soft threshold fires its alert once.

/** One request of the batch, as billed. */
export interface BilledRequest {
  requestId: string;
  tokenId: number;
  requestedAt: Date;
  /** Micro-dollars after the price group multiplier. */
  cost: bigint;
  /** False for a request billed before (a redelivery): its holds are settled, nothing is added. */
  inserted: boolean;
}

export interface BudgetOutcome {
  /** Spend ledger settlements of budget and balance accounts, with their committed totals. */
  settlements: Settlement[];
  /** Soft alerts this batch fired (claimed and audited in its transaction). */
  alerts: BudgetAlert[];
}

@Injectable()
export class BudgetSpend {
  private readonly zone: string;

  constructor(
    private readonly counters: BudgetCounters,
    env: MeteringEnv,
  ) {
    this.zone = env.BUDGET_TIME_ZONE;
  }

  /** The team, owner and price multiplier of each token, read in the settlement's transaction. */
  coverOf(client: SqlClient, tokenIds: number[]): Promise<Map<number, TokenCover>> {
    return this.counters.coverOf(client, tokenIds);
  }

  async apply(
    client: SqlClient,
    requests: BilledRequest[],
    covers: Map<number, TokenCover>,
  ): Promise<BudgetOutcome> {
    const subjectsOf = (tokenId: number) => {
      const cover = covers.get(tokenId);
      return subjectsCovering({
        tokenId,
        teamId: cover?.teamId ?? null,
        ownerId: cover?.ownerId ?? null,
      });
    };
    const allSubjects = new Set(requests.flatMap((r) => subjectsOf(r.tokenId)));
    const budgets = await this.counters.budgetsFor(client, [...allSubjects]);

    // Per (subject, period): what the batch adds, and which requests held there.
    const additions = new Map<string, SpendAddition & { budget: CoveringBudget; ids: string[] }>();
    for (const request of requests) {
      for (const subject of subjectsOf(request.tokenId)) {
        const budget = budgets.get(subject);
        if (!budget) continue;
        const { start } = periodSpan(budget.period, request.requestedAt, this.zone);
        const key = budgetAccount(subject, start);
        let addition = additions.get(key);
        if (!addition) {
          addition = { subject, periodStart: start, cost: 0n, budget, ids: [] };
          additions.set(key, addition);
        }
        if (request.inserted) addition.cost += request.cost;
        addition.ids.push(request.requestId);
      }
    }
    const ordered = [...additions.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const spends = await this.counters.addSpend(
      client,
      ordered.map(([, a]) => a),
    );
    const spentOf = new Map(
      spends.map((s) => [budgetAccount(s.subject, s.periodStart), s.spent] as const),
    );

    const settlements: Settlement[] = [];
    const alerts: BudgetAlert[] = [];
    const firedAt = new Date();
    // Budget rows are claimed in id order, the one lock order of every settlement.
    const crossing: [string, (typeof ordered)[number][1], bigint][] = [];
    for (const [account, addition] of ordered) {
      const spent = spentOf.get(account);
      if (spent === undefined) continue;
      settlements.push({ account, total: Number(spent), requestIds: addition.ids });
      const { budget } = addition;
      if (
        addition.cost > 0n &&
        softThresholdReached(spent, budget.amount, budget.softPercent) &&
        (budget.alertedFor === null || budget.alertedFor < addition.periodStart)
      ) {
        crossing.push([account, addition, spent]);
      }
    }
    crossing.sort(([, a], [, b]) => a.budget.id - b.budget.id);
    for (const [, addition, spent] of crossing) {
      const { budget, periodStart: start } = addition;
      if (!(await this.counters.claimSoftAlert(client, budget, start, spent))) continue;
      const end = periodEnd(budget.period, start, this.zone);
      alerts.push({
        event: 'budget.soft_threshold',
        budgetId: budget.id,
        subject: budget.subject,
        level: levelOfSubject(budget.subject),
        amount: budget.amount.toString(),
        spent: spent.toString(),
        softPercent: budget.softPercent!,
        period: budget.period,
        periodStart: start.toISOString(),
        periodEnd: end?.toISOString() ?? null,
        firedAt: firedAt.toISOString(),
      });
    }

    settlements.push(...(await this.debitBalances(client, requests, covers)));
    return { settlements, alerts };
  }

  /** One ledger row per billed request of a balance team; the teams' debited totals settle their holds. */
  private async debitBalances(
    client: SqlClient,
    requests: BilledRequest[],
    covers: Map<number, TokenCover>,
  ): Promise<Settlement[]> {
    const debits: BalanceDebit[] = [];
    const idsOf = new Map<number, string[]>();
    for (const request of requests) {
      const cover = covers.get(request.tokenId);
      if (!cover?.balance || cover.teamId === null) continue;
      const ids = idsOf.get(cover.teamId) ?? [];
      ids.push(request.requestId);
      idsOf.set(cover.teamId, ids);
      if (request.inserted && request.cost > 0n)
        debits.push({ teamId: cover.teamId, requestId: request.requestId, amount: request.cost });
    }
    if (idsOf.size === 0) return [];
    const debited = new Map(
      (await this.counters.debit(client, debits)).map((d) => [d.teamId, d.debited] as const),
    );
    return [...idsOf].map(([teamId, requestIds]) => {
      const total = debited.get(teamId);
      return {
        account: balanceAccount(teamId),
        // A team with nothing debited now is not locked nor read: its holds just drop.
        total: total === undefined ? null : Number(total),
        requestIds,
      };
    });
  }
}
