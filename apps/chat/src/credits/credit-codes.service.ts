import { Inject, Injectable, Logger } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { type CreditCodeBatch, type CreditPlan } from '@switchyard/db';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { FailureLimiter } from '@switchyard/limiter';
import { generateRedemptionCode, normaliseRedemptionCode, sha256Hex } from '@switchyard/security';
import { skipTake } from '@switchyard/service';
import { type Principal } from '../auth/principal.js';
import {
  type CodeBatchPageResponse,
  type CodeBatchQuery,
  type CodeBatchResponse,
  type CreateCodesDto,
  type CreatedCodesResponse,
  type RedeemResponse,
} from './credits.dto.js';
import { CreditCodesRepository } from './credit-codes.repository.js';
import { CreditPlansRepository } from './credit-plans.repository.js';
import { CreditsClock } from './credits.clock.js';

// Redemption codes (docs/credits.md, "Redemption codes"): made in batches, shown once,
// kept only as SHA-256 hashes, each redeemed once. Wrong, used and expired codes get the
// same answer, so trying codes tells nothing about which exist; failed tries are limited
// per user and per client address.

export const REDEEM_LIMITS = {
  failuresPerUser: 10,
  failuresPerAddress: 30,
  windowSeconds: 3600,
};

function toBatch(
  batch: CreditCodeBatch & { plan: CreditPlan | null },
  redeemed: number,
): CodeBatchResponse {
  return {
    id: batch.id,
    credits: batch.credits,
    planId: batch.planId,
    planName: batch.plan?.name ?? null,
    count: batch.count,
    redeemed,
    note: batch.note,
    expiresAt: batch.expiresAt?.toISOString() ?? null,
    createdAt: batch.createdAt.toISOString(),
  };
}

@Injectable()
export class CreditCodesService {
  private readonly logger = new Logger(CreditCodesService.name);
  private readonly failures: FailureLimiter;

  constructor(
    private readonly codes: CreditCodesRepository,
    private readonly plans: CreditPlansRepository,
    private readonly clock: CreditsClock,
    @Inject(REDIS) redis: RedisClient,
  ) {
    this.failures = new FailureLimiter(redis, REDEEM_LIMITS.windowSeconds);
  }

  async create(actor: Principal, dto: CreateCodesDto): Promise<CreatedCodesResponse> {
    const expiresAt = dto.expiresAt === undefined ? null : new Date(dto.expiresAt);
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw new ApiError('validation_failed', 'expiresAt must be in the future', [
        { field: 'expiresAt', message: 'expiresAt must be in the future' },
      ]);
    }
    const planId = await this.planForCodes(dto);
    const codes = Array.from({ length: dto.count }, generateRedemptionCode);
    const batch = await this.codes.createBatch(
      {
        credits: dto.credits ?? 0,
        planId,
        note: dto.note ?? '',
        expiresAt,
        createdById: actor.id,
      },
      codes.map((code) => ({
        codeHash: sha256Hex(normaliseRedemptionCode(code)),
        lastFour: code.slice(-4),
      })),
    );
    this.logger.log({
      message: 'credit codes made',
      batchId: batch.id,
      count: dto.count,
      planId,
      by: actor.id,
    });
    return { batch: toBatch(batch, 0), codes };
  }

  /** The batch's plan, if it gives one: codes give credits or a plan, never both. */
  private async planForCodes(dto: CreateCodesDto): Promise<number | null> {
    if (dto.planId === undefined) return null;
    const refuse = (message: string) =>
      new ApiError('validation_failed', message, [{ field: 'planId', message }]);
    if (dto.credits !== undefined) {
      throw refuse('planId: codes give credits or a plan, not both');
    }
    const plan = await this.plans.findPlan(dto.planId);
    if (!plan) throw refuse(`planId: no plan has id ${dto.planId}`);
    if (plan.disabled) throw refuse(`planId: the plan ${plan.name} is disabled`);
    return plan.id;
  }

  async list(query: CodeBatchQuery): Promise<CodeBatchPageResponse> {
    const { skip, take } = skipTake(query);
    const page = await this.codes.batches(skip, take);
    return { items: page.rows.map((row) => toBatch(row, row.redeemed)), total: page.total };
  }

  async redeem(principal: Principal, code: string, clientAddress: string): Promise<RedeemResponse> {
    // Each try counts as a failure until it succeeds, so tries sent at once cannot all slip
    // under the limit together.
    const attempt = await this.failures.begin([
      { key: `chat:redeem:user:${principal.id}`, max: REDEEM_LIMITS.failuresPerUser },
      { key: `chat:redeem:address:${clientAddress}`, max: REDEEM_LIMITS.failuresPerAddress },
    ]);
    if (!attempt) {
      throw new ApiError(
        'too_many_attempts',
        'Too many codes that did not work; try again in an hour',
        undefined,
        { retryAfterSeconds: REDEEM_LIMITS.windowSeconds },
      );
    }
    const result = await this.codes.redeem(
      sha256Hex(normaliseRedemptionCode(code)),
      principal.id,
      this.clock.now(),
    );
    if (!result?.ok) {
      throw new ApiError(
        'code_not_redeemable',
        'This code is not valid: it may be mistyped, already used or expired',
      );
    }
    await attempt.succeeded();
    this.logger.log({
      message: 'credit code redeemed',
      userId: principal.id,
      credits: result.entry.amount,
      planId: result.plan?.id,
    });
    return {
      credits: result.entry.amount,
      plan: result.plan?.name ?? null,
      balance: result.balance,
    };
  }
}
