import { Injectable } from '@nestjs/common';
import { AdminEnv } from '@switchyard/config';
import { ApiError } from '@switchyard/contracts';
import { Prisma, PrismaService, type Budget } from '@switchyard/db';
import { budgetSubject, periodEnd, periodStart, softThresholdReached } from '@switchyard/domain';
import { type Page } from '@switchyard/service';
import { AuditService } from '../audit/audit.service.js';
import { type Actor } from '../common/actor.js';
import { fieldError } from '../common/validators.js';
import { ChangeEvents } from '../events/change-events.js';
import {
  type BudgetResponse,
  type ListBudgetsQuery,
  type SetBudgetDto,
  type SetBudgetResponse,
} from './budgets.dto.js';
import { spentInPeriods } from './budget-spend.repository.js';

/** Budgets listed at once on the Budgets page; beyond this they are paged after sorting. */
const MAX_SORTED_BUDGETS = 10_000;

/**
 * Budgets at the four levels of docs/teams.md, "Budgets". Spend is what metering settled
 * in `BudgetSpend` for the period that contains now, its start computed by libs/domain in
 * BUDGET_TIME_ZONE: the same period the edge refuses in.
 */
@Injectable()
export class BudgetsService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly env: AdminEnv,
    private readonly audit: AuditService,
    private readonly events: ChangeEvents,
  ) {}

  async list(query: ListBudgetsQuery): Promise<Page<BudgetResponse>> {
    const rows = await this.prisma.budget.findMany({
      where: {
        ...(query.teamId ? { teamId: query.teamId } : {}),
        ...(query.level ? { level: query.level } : {}),
      },
      take: MAX_SORTED_BUDGETS,
    });
    const views = (await this.views(rows)).sort(
      (a, b) => b.percent - a.percent || a.remaining - b.remaining || a.id - b.id,
    );
    const skip = (query.page - 1) * query.pageSize;
    return { items: views.slice(skip, skip + query.pageSize), total: views.length };
  }

  /** The budgets of a team: its own, its members' and its tokens'. */
  async ofTeam(teamId: number): Promise<BudgetResponse[]> {
    const rows = await this.prisma.budget.findMany({ where: { teamId }, orderBy: { id: 'asc' } });
    return this.views(rows);
  }

  /** What a member may see of a team's budgets: the team's, their own, their tokens'. */
  async coveringMember(teamId: number, userId: number): Promise<BudgetResponse[]> {
    const tokens = await this.prisma.token.findMany({
      where: { teamId, ownerId: userId },
      select: { id: true },
    });
    const subjects = [
      budgetSubject('team', teamId),
      budgetSubject('member', teamId, userId),
      ...tokens.map((t) => budgetSubject('token', t.id)),
    ];
    const rows = await this.prisma.budget.findMany({
      where: { subject: { in: subjects } },
      orderBy: { id: 'asc' },
    });
    return this.views(rows);
  }

  async set(actor: Actor, dto: SetBudgetDto): Promise<SetBudgetResponse> {
    const target = await this.target(dto);
    const softPercent = dto.softPercent ?? null;
    const data = {
      level: dto.level,
      teamId: target.teamId,
      userId: target.userId,
      tokenId: target.tokenId,
      amount: BigInt(dto.amount),
      period: dto.period,
      softPercent,
    };
    const budget = await this.prisma.$transaction(async (db) => {
      const before = await db.budget.findUnique({ where: { subject: target.subject } });
      const saved = await db.budget.upsert({
        where: { subject: target.subject },
        create: { subject: target.subject, ...data },
        // A new period starts a new alert cycle; otherwise the period's alert stays sent.
        update: {
          ...data,
          ...(before && before.period !== dto.period ? { alertedFor: null } : {}),
        },
      });
      await this.audit.record(
        {
          actor,
          action: before ? 'budget.update' : 'budget.create',
          target: { type: 'budget', id: saved.id },
          details: {
            subject: target.subject,
            amount: dto.amount,
            period: dto.period,
            softPercent,
            ...(before
              ? {
                  from: {
                    amount: Number(before.amount),
                    period: before.period,
                    softPercent: before.softPercent,
                  },
                }
              : {}),
          },
        },
        db,
      );
      return saved;
    });
    await this.events.budgetChanged(target.subject, 'updated');
    const [view] = await this.views([budget]);
    const response: SetBudgetResponse = { ...view! };
    if (view!.exceeded) {
      response.warning =
        `${view!.spent} micro-dollars are already spent this period, at or above the amount ${view!.amount}: ` +
        `requests it covers are refused from now on` +
        (view!.resetsAt
          ? `, until it resets at ${view!.resetsAt.toISOString()}`
          : ' (period none: it never resets)');
    }
    return response;
  }

  async clear(actor: Actor, id: number): Promise<void> {
    const budget = await this.prisma.$transaction(async (db) => {
      const current = await db.budget.findUnique({ where: { id } });
      if (!current) throw new ApiError('not_found', `No budget with id ${id}`);
      await db.budget.delete({ where: { id } });
      await this.audit.record(
        {
          actor,
          action: 'budget.delete',
          target: { type: 'budget', id },
          details: {
            subject: current.subject,
            amount: Number(current.amount),
            period: current.period,
          },
        },
        db,
      );
      return current;
    });
    await this.events.budgetChanged(budget.subject, 'deleted');
  }

  /** Clears the budgets of a token (deleted) or of a member who left a team, in `db`. */
  async clearSubjects(db: Prisma.TransactionClient, subjects: string[]): Promise<number> {
    const { count } = await db.budget.deleteMany({ where: { subject: { in: subjects } } });
    return count;
  }

  /** Each budget with its spend this period, reset time and percent. */
  async views(budgets: Budget[], now = new Date()): Promise<BudgetResponse[]> {
    if (budgets.length === 0) return [];
    const zone = this.env.BUDGET_TIME_ZONE;
    const starts = budgets.map((b) => periodStart(b.period, now, zone));
    const spends = await spentInPeriods(
      this.prisma,
      budgets.map((b) => b.subject),
      starts,
    );
    const spent = new Map(spends.map((s) => [`${s.subject}@${s.periodStart.getTime()}`, s.spent]));
    const labels = await this.labels(budgets);
    return budgets.map((budget, i) => {
      const start = starts[i]!;
      const used = spent.get(`${budget.subject}@${start.getTime()}`) ?? 0n;
      const amount = budget.amount;
      const percent = amount === 0n ? 100 : Math.round(Number((used * 10_000n) / amount)) / 100;
      return {
        id: budget.id,
        subject: budget.subject,
        level: budget.level,
        teamId: budget.teamId,
        userId: budget.userId,
        tokenId: budget.tokenId,
        label: labels.get(budget.subject) ?? budget.subject,
        amount: Number(amount),
        period: budget.period,
        softPercent: budget.softPercent,
        spent: Number(used),
        remaining: Number(used >= amount ? 0n : amount - used),
        percent,
        exceeded: used >= amount,
        softReached: softThresholdReached(used, amount, budget.softPercent),
        periodStart: start,
        resetsAt: periodEnd(budget.period, now, zone),
        updatedAt: budget.updatedAt,
      };
    });
  }

  private async labels(budgets: Budget[]): Promise<Map<string, string>> {
    const ids = (pick: (b: Budget) => number | null) => [
      ...new Set(budgets.map(pick).filter((id): id is number => id !== null)),
    ];
    const [tokens, users, teams] = await Promise.all([
      this.prisma.token.findMany({
        where: { id: { in: ids((b) => b.tokenId) } },
        select: { id: true, name: true },
      }),
      this.prisma.adminUser.findMany({
        where: { id: { in: ids((b) => b.userId) } },
        select: { id: true, username: true },
      }),
      this.prisma.team.findMany({
        where: { id: { in: ids((b) => b.teamId) } },
        select: { id: true, name: true },
      }),
    ]);
    const token = new Map(tokens.map((t) => [t.id, t.name]));
    const user = new Map(users.map((u) => [u.id, u.username]));
    const team = new Map(teams.map((t) => [t.id, t.name]));
    const labels = new Map<string, string>();
    for (const b of budgets) {
      const label =
        b.level === 'gateway'
          ? 'Gateway'
          : b.level === 'token'
            ? token.get(b.tokenId!)
            : b.level === 'team'
              ? team.get(b.teamId!)
              : `${user.get(b.userId!) ?? `user ${b.userId}`} in ${team.get(b.teamId!) ?? `team ${b.teamId}`}`;
      if (label) labels.set(b.subject, label);
    }
    return labels;
  }

  /** The subject a body names, after checking that what it names exists. */
  private async target(dto: SetBudgetDto): Promise<{
    subject: string;
    teamId: number | null;
    userId: number | null;
    tokenId: number | null;
  }> {
    const need = (field: 'tokenId' | 'teamId' | 'userId', value: number | undefined): number => {
      if (value === undefined)
        throw fieldError(field, `${field} is required for level ${dto.level}`);
      return value;
    };
    const refuse = (field: 'tokenId' | 'teamId' | 'userId', value: number | undefined) => {
      if (value !== undefined)
        throw fieldError(field, `${field} does not belong to a budget of level ${dto.level}`);
    };
    switch (dto.level) {
      case 'gateway':
        refuse('tokenId', dto.tokenId);
        refuse('teamId', dto.teamId);
        refuse('userId', dto.userId);
        return { subject: budgetSubject('gateway'), teamId: null, userId: null, tokenId: null };
      case 'token': {
        const tokenId = need('tokenId', dto.tokenId);
        refuse('teamId', dto.teamId);
        refuse('userId', dto.userId);
        const token = await this.prisma.token.findUnique({ where: { id: tokenId } });
        if (!token) throw new ApiError('not_found', `No token with id ${tokenId}`);
        return {
          subject: budgetSubject('token', tokenId),
          teamId: token.teamId,
          userId: null,
          tokenId,
        };
      }
      case 'team': {
        const teamId = need('teamId', dto.teamId);
        refuse('tokenId', dto.tokenId);
        refuse('userId', dto.userId);
        if (!(await this.prisma.team.findUnique({ where: { id: teamId } })))
          throw new ApiError('not_found', `No team with id ${teamId}`);
        return { subject: budgetSubject('team', teamId), teamId, userId: null, tokenId: null };
      }
      case 'member': {
        const teamId = need('teamId', dto.teamId);
        const userId = need('userId', dto.userId);
        refuse('tokenId', dto.tokenId);
        if (!(await this.prisma.team.findUnique({ where: { id: teamId } })))
          throw new ApiError('not_found', `No team with id ${teamId}`);
        const member = await this.prisma.teamMember.findUnique({
          where: { teamId_userId: { teamId, userId } },
        });
        if (!member)
          throw fieldError('userId', `userId ${userId} is not a member of team ${teamId}`);
        return { subject: budgetSubject('member', teamId, userId), teamId, userId, tokenId: null };
      }
    }
  }
}
