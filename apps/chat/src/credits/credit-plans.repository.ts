import { Injectable } from '@nestjs/common';
import {
  PrismaService,
  type CreditKind,
  type CreditPlan,
  type UserCreditPlan,
} from '@switchyard/db';
import { CreditsRepository, type ChangeResult, type Tx } from './credits.repository.js';
import { nextPeriod, periodLabel, periodStart, type PlanPeriod } from './plan-periods.js';

// Plans and who has one (docs/credits.md, "Plans"). A top-up moves the subscription's
// `nextTopUpAt` on with a conditional UPDATE (it must still be the period being topped up)
// in the transaction of its `plan` ledger entry: of concurrent schedulers only the first
// matches, so each period is topped up exactly once.

export interface PlanWithCount extends CreditPlan {
  subscribers: number;
}

export type Subscription = UserCreditPlan & { plan: CreditPlan };

@Injectable()
export class CreditPlansRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly credits: CreditsRepository,
  ) {}

  async list(): Promise<PlanWithCount[]> {
    const plans = await this.prisma.creditPlan.findMany({
      orderBy: { id: 'asc' },
      include: { _count: { select: { subscribers: true } } },
    });
    return plans.map(({ _count, ...plan }) => ({ ...plan, subscribers: _count.subscribers }));
  }

  create(plan: {
    name: string;
    credits: number;
    period: PlanPeriod;
    models: string[];
  }): Promise<CreditPlan> {
    return this.prisma.creditPlan.create({ data: plan });
  }

  /** Throws Prisma's record-not-found or unique violation. */
  update(
    id: number,
    changes: { name?: string; credits?: number; models?: string[]; disabled?: boolean },
  ): Promise<CreditPlan> {
    return this.prisma.creditPlan.update({ where: { id }, data: changes });
  }

  /**
   * Moves the subscriptions of a plan that waited while it was disabled to `next`: periods
   * that began while it was disabled are not topped up when it is enabled again.
   */
  async skipMissed(planId: number, now: Date, next: Date): Promise<void> {
    await this.prisma.userCreditPlan.updateMany({
      where: { planId, nextTopUpAt: { lte: now } },
      data: { nextTopUpAt: next },
    });
  }

  findPlan(id: number): Promise<CreditPlan | null> {
    return this.prisma.creditPlan.findUnique({ where: { id } });
  }

  subscriptionOf(userId: number): Promise<Subscription | null> {
    return this.prisma.userCreditPlan.findUnique({ where: { userId }, include: { plan: true } });
  }

  /**
   * Gives the user the plan, topped up at once for the period `now` is in, the next top-up
   * at the start of the next; null when there is no such user.
   */
  subscribe(
    userId: number,
    plan: CreditPlan,
    now: Date,
    actorId: number | null,
  ): Promise<ChangeResult> {
    return this.prisma.$transaction((tx) => this.subscribeIn(tx, userId, plan, now, actorId));
  }

  /**
   * The subscription inside a transaction of the caller's. Its first top-up is a `plan`
   * entry, or, given `by`, an entry of that kind whose reason begins with `by.reason` (a
   * redeemed plan code's `redeem`).
   */
  async subscribeIn(
    tx: Tx,
    userId: number,
    plan: CreditPlan,
    now: Date,
    actorId: number | null,
    by?: { kind: CreditKind; reason: string },
  ): Promise<ChangeResult> {
    const start = periodStart(plan.period, now);
    const topUp = `plan ${plan.name} for ${periodLabel(plan.period, start)}`;
    const result = await this.credits.changeIn(tx, {
      userId,
      kind: by?.kind ?? 'plan',
      amount: plan.credits,
      reason: by ? `${by.reason}: ${topUp}` : topUp,
      actorId,
    });
    if (!result.ok) return result;
    const fields = {
      planId: plan.id,
      assignedAt: now,
      assignedBy: actorId,
      nextTopUpAt: nextPeriod(plan.period, start),
    };
    await tx.userCreditPlan.upsert({
      where: { userId },
      create: { userId, ...fields },
      update: fields,
    });
    return result;
  }

  async unsubscribe(userId: number): Promise<void> {
    await this.prisma.userCreditPlan.deleteMany({ where: { userId } });
  }

  /** Subscriptions of enabled plans with a period that started by `now`, not topped up yet. */
  due(now: Date, take: number): Promise<Subscription[]> {
    return this.prisma.userCreditPlan.findMany({
      where: { nextTopUpAt: { lte: now }, plan: { disabled: false } },
      orderBy: { nextTopUpAt: 'asc' },
      include: { plan: true },
      take,
    });
  }

  /**
   * Tops up the period that starts at `due` and moves on to the next, if the subscription
   * still waits for exactly that period of that plan; false when another scheduler did it
   * (or the plan changed meanwhile).
   */
  topUp(subscription: Subscription, due: Date): Promise<boolean> {
    const { plan } = subscription;
    const next = nextPeriod(plan.period, due);
    return this.prisma.$transaction(async (tx) => {
      const moved = await tx.userCreditPlan.updateMany({
        where: { userId: subscription.userId, planId: plan.id, nextTopUpAt: due },
        data: { nextTopUpAt: next },
      });
      if (moved.count === 0) return false;
      const result = await this.credits.changeIn(tx, {
        userId: subscription.userId,
        kind: 'plan',
        amount: plan.credits,
        reason: `plan ${plan.name} for ${periodLabel(plan.period, due)}`,
      });
      return result.ok;
    });
  }
}
