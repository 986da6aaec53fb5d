import { Injectable, Logger } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { isRecordNotFound, isUniqueViolation, type CreditPlan } from '@switchyard/db';
import { type Principal } from '../auth/principal.js';
import { ModelsRepository } from '../models/models.repository.js';
import { CreditPlansRepository, type Subscription } from './credit-plans.repository.js';
import {
  type AssignPlanDto,
  type CreatePlanDto,
  type PlanListResponse,
  type PlanResponse,
  type SubscriptionResponse,
  type UpdatePlanDto,
} from './credits.dto.js';
import { CreditsRepository } from './credits.repository.js';
import { nextPeriod, periodStart } from './plan-periods.js';

// Plans (docs/credits.md, "Plans"): credits added once per UTC day or month to each user on
// the plan, by an administrator's assignment and then by the scheduler at each boundary.

/** Periods one subscription catches up in one run, after the scheduler was stopped a while. */
const CATCH_UP_LIMIT = 62;
/** Subscriptions looked at in one run; the next run takes the rest. */
const DUE_BATCH = 500;

function toPlan(plan: CreditPlan, subscribers = 0): PlanResponse {
  return {
    id: plan.id,
    name: plan.name,
    credits: plan.credits,
    period: plan.period,
    models: plan.models,
    disabled: plan.disabled,
    subscribers,
    createdAt: plan.createdAt.toISOString(),
  };
}

@Injectable()
export class CreditPlansService {
  private readonly logger = new Logger(CreditPlansService.name);

  constructor(
    private readonly plans: CreditPlansRepository,
    private readonly credits: CreditsRepository,
    private readonly models: ModelsRepository,
  ) {}

  async list(): Promise<PlanListResponse> {
    const items = (await this.plans.list()).map((plan) => toPlan(plan, plan.subscribers));
    return { items, total: items.length };
  }

  async create(dto: CreatePlanDto): Promise<PlanResponse> {
    const models = await this.knownModels(dto.models ?? []);
    try {
      return toPlan(await this.plans.create({ ...dto, models }));
    } catch (error) {
      throw this.translate(error, dto.name);
    }
  }

  /**
   * Changes a plan. New credits apply from the next top-up; enabling a disabled plan again
   * tops its subscribers up from the next period on, not for the periods it was disabled.
   */
  async update(id: number, dto: UpdatePlanDto, now: Date): Promise<PlanResponse> {
    const before = await this.plans.findPlan(id);
    if (!before) throw new ApiError('not_found', `No plan with id ${id}`);
    const changes = {
      ...dto,
      ...(dto.models === undefined ? {} : { models: await this.knownModels(dto.models) }),
    };
    let plan: CreditPlan;
    try {
      plan = await this.plans.update(id, changes);
    } catch (error) {
      throw this.translate(error, dto.name, id);
    }
    if (before.disabled && !plan.disabled) {
      await this.plans.skipMissed(id, now, nextPeriod(plan.period, periodStart(plan.period, now)));
    }
    this.logger.log({ message: 'plan changed', planId: id, ...changes });
    const count = (await this.plans.list()).find((row) => row.id === id)?.subscribers ?? 0;
    return toPlan(plan, count);
  }

  async subscription(userId: number): Promise<SubscriptionResponse> {
    const balance = await this.credits.balanceOf(userId);
    if (balance === null) throw new ApiError('not_found', `No user with id ${userId}`);
    return this.describe(await this.plans.subscriptionOf(userId), balance);
  }

  /** Puts the user on the plan (topped up at once for the current period), or off any. */
  async assign(
    actor: Principal,
    userId: number,
    dto: AssignPlanDto,
    now: Date,
  ): Promise<SubscriptionResponse> {
    if (dto.planId === null) {
      await this.plans.unsubscribe(userId);
      return this.subscription(userId);
    }
    const plan = await this.plans.findPlan(dto.planId);
    if (!plan) {
      const message = `planId: no plan has id ${dto.planId}`;
      throw new ApiError('validation_failed', message, [{ field: 'planId', message }]);
    }
    if (plan.disabled) {
      const message = `planId: the plan ${plan.name} is disabled`;
      throw new ApiError('validation_failed', message, [{ field: 'planId', message }]);
    }
    const result = await this.plans.subscribe(userId, plan, now, actor.id);
    if (!result.ok) throw new ApiError('not_found', `No user with id ${userId}`);
    this.logger.log({ message: 'plan assigned', userId, planId: plan.id, by: actor.id });
    return this.subscription(userId);
  }

  /**
   * Tops up every period that started by `now` and is not topped up yet, each once, and
   * resolves to how many it topped up. The scheduler calls it with the clock's time; the
   * specs with the times they choose.
   */
  async runDue(now: Date): Promise<number> {
    let toppedUp = 0;
    for (const subscription of await this.plans.due(now, DUE_BATCH)) {
      let due = subscription.nextTopUpAt;
      for (let n = 0; n < CATCH_UP_LIMIT && due <= now; n += 1) {
        if (!(await this.plans.topUp(subscription, due))) break;
        toppedUp += 1;
        due = nextPeriod(subscription.plan.period, due);
      }
    }
    return toppedUp;
  }

  /** The names, without duplicates, once each is known to be a chat model. */
  private async knownModels(names: string[]): Promise<string[]> {
    const unique = [...new Set(names)];
    const known = new Set(await this.models.existingNames(unique));
    const unknown = unique.filter((name) => !known.has(name));
    if (unknown.length > 0) {
      const message = `models: add these models first: ${unknown.join(', ')}`;
      throw new ApiError('validation_failed', message, [{ field: 'models', message }]);
    }
    return unique;
  }

  private translate(error: unknown, name?: string, id?: number): unknown {
    if (isUniqueViolation(error)) {
      const message = `name: a plan named "${name ?? ''}" exists`;
      return new ApiError('validation_failed', message, [{ field: 'name', message }]);
    }
    if (isRecordNotFound(error)) return new ApiError('not_found', `No plan with id ${id ?? ''}`);
    return error;
  }

  private describe(subscription: Subscription | null, balance: number): SubscriptionResponse {
    return {
      plan: subscription ? toPlan(subscription.plan) : null,
      nextTopUpAt: subscription?.nextTopUpAt.toISOString() ?? null,
      balance,
    };
  }
}
