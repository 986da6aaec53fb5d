import { Inject, Injectable, Logger } from '@nestjs/common';
import { AdminEnv } from '@switchyard/config';
import { ApiError } from '@switchyard/contracts';
import { PrismaService, type RedemptionBatch } from '@switchyard/db';
import { FailureLimiter } from '@switchyard/limiter';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { generateRedemptionCode, normaliseRedemptionCode, sha256Hex } from '@switchyard/security';
import { skipTake, type Page } from '@switchyard/service';
import { AuditService } from '../audit/audit.service.js';
import { BalancesService, LEDGER_TRANSACTION } from '../balances/balances.service.js';
import { type Actor } from '../common/actor.js';
import { type PageQuery } from '../common/pagination.js';
import { fieldError } from '../common/validators.js';
import { ChangeEvents } from '../events/change-events.js';
import {
  type CreateRedemptionBatchDto,
  type CreatedRedemptionBatchResponse,
  type RedeemedResponse,
  type RedemptionBatchResponse,
  type RedemptionCodeResponse,
} from './redemption.dto.js';
import { takeCode } from './redemption-codes.repository.js';

/** Failed redemptions are counted over this window (docs/teams.md, "Redemption codes"). */
export const REDEEM_WINDOW_SECONDS = 3600;

/**
 * Redemption codes for balance teams (docs/teams.md, "Redemption codes"), one-api's model:
 * generated in batches, shown once (with the CSV, the only export) and kept as SHA-256
 * hashes; a member redeems one for a balance team they belong to. Unlike chat credit codes
 * (docs/credits.md), a used or expired code says so (409, 410): the rate limit on failures,
 * per member and per address, is what stops guessing.
 */
@Injectable()
export class RedemptionService {
  private readonly logger = new Logger(RedemptionService.name);
  private readonly failures: FailureLimiter;

  constructor(
    private readonly prisma: PrismaService,
    private readonly env: AdminEnv,
    private readonly balances: BalancesService,
    private readonly audit: AuditService,
    private readonly events: ChangeEvents,
    @Inject(REDIS) redis: RedisClient,
  ) {
    this.failures = new FailureLimiter(redis, REDEEM_WINDOW_SECONDS);
  }

  async create(
    actor: Actor,
    dto: CreateRedemptionBatchDto,
  ): Promise<CreatedRedemptionBatchResponse> {
    const expiresAt = dto.expiresAt === null ? null : new Date(dto.expiresAt);
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw fieldError('expiresAt', 'expiresAt must be in the future, or null for never');
    }
    const codes = Array.from({ length: dto.count }, generateRedemptionCode);
    const batch = await this.prisma.$transaction(async (db) => {
      const created = await db.redemptionBatch.create({
        data: {
          value: BigInt(dto.value),
          count: dto.count,
          note: dto.note?.trim() ?? '',
          expiresAt,
          createdById: actor.id ?? 0,
        },
      });
      await db.redemptionCode.createMany({
        data: codes.map((code) => ({
          batchId: created.id,
          codeHash: sha256Hex(normaliseRedemptionCode(code)),
          lastFour: code.slice(-4),
        })),
      });
      await this.audit.record(
        {
          actor,
          action: 'redemption.create',
          target: { type: 'redemption_batch', id: created.id },
          details: {
            value: dto.value,
            count: dto.count,
            expiresAt: expiresAt?.toISOString() ?? null,
            note: created.note,
          },
        },
        db,
      );
      return created;
    });
    const expires = expiresAt?.toISOString() ?? '';
    const csv = [
      'code,value_micro_dollars,expires_at,batch_id',
      ...codes.map((code) => `${code},${dto.value},${expires},${batch.id}`),
    ].join('\n');
    return { batch: toBatchResponse(batch, 0), codes, csv: `${csv}\n` };
  }

  async list(query: PageQuery): Promise<Page<RedemptionBatchResponse>> {
    const [rows, total] = await Promise.all([
      this.prisma.redemptionBatch.findMany({ orderBy: { id: 'desc' }, ...skipTake(query) }),
      this.prisma.redemptionBatch.count(),
    ]);
    const used = await this.prisma.redemptionCode.groupBy({
      by: ['batchId'],
      where: { batchId: { in: rows.map((r) => r.id) }, redeemedAt: { not: null } },
      _count: { _all: true },
    });
    const usedBy = new Map(used.map((u) => [u.batchId, u._count._all]));
    return { items: rows.map((row) => toBatchResponse(row, usedBy.get(row.id) ?? 0)), total };
  }

  async codes(batchId: number, query: PageQuery): Promise<Page<RedemptionCodeResponse>> {
    if (!(await this.prisma.redemptionBatch.findUnique({ where: { id: batchId } }))) {
      throw new ApiError('not_found', `No redemption batch with id ${batchId}`);
    }
    const [rows, total] = await Promise.all([
      this.prisma.redemptionCode.findMany({
        where: { batchId },
        orderBy: { id: 'asc' },
        ...skipTake(query),
      }),
      this.prisma.redemptionCode.count({ where: { batchId } }),
    ]);
    const users = await this.prisma.adminUser.findMany({
      where: { id: { in: rows.flatMap((r) => (r.redeemedById ? [r.redeemedById] : [])) } },
      select: { id: true, username: true },
    });
    const name = new Map(users.map((u) => [u.id, u.username]));
    return {
      items: rows.map((r) => ({
        id: r.id,
        lastFour: r.lastFour,
        redeemedAt: r.redeemedAt,
        redeemedById: r.redeemedById,
        redeemedBy: r.redeemedById ? (name.get(r.redeemedById) ?? null) : null,
        redeemedTeamId: r.redeemedTeamId,
      })),
      total,
    };
  }

  /**
   * A member redeems a code for `teamId` (whose membership the caller checked). Each try
   * counts as a failure until it succeeds; past the limits the answer is 429 whatever the code.
   */
  async redeem(
    actor: Actor,
    teamId: number,
    code: string,
    clientIp: string,
  ): Promise<RedeemedResponse> {
    const attempt = await this.failures.begin([
      { key: `admin:redeem:member:${actor.id}`, max: this.env.REDEEM_MAX_FAILURES_PER_MEMBER },
      { key: `admin:redeem:address:${clientIp}`, max: this.env.REDEEM_MAX_FAILURES_PER_IP },
    ]);
    if (!attempt) {
      throw new ApiError(
        'too_many_attempts',
        'Too many codes that did not work; try again within the hour',
        undefined,
        { retryAfterSeconds: REDEEM_WINDOW_SECONDS },
      );
    }
    const hash = sha256Hex(normaliseRedemptionCode(code));
    const entry = await this.prisma.$transaction(async (db) => {
      const taken = await takeCode(db, hash, actor.id ?? null, teamId);
      const row = taken[0];
      if (!row) {
        const found = await db.redemptionCode.findUnique({
          where: { codeHash: hash },
          include: { batch: { select: { expiresAt: true } } },
        });
        if (!found) throw new ApiError('not_found', 'No such redemption code');
        if (found.redeemedAt) throw new ApiError('code_used', 'This code was already redeemed');
        throw new ApiError('code_expired', 'This code has expired');
      }
      return this.balances.apply(
        db,
        actor,
        teamId,
        'redeem',
        row.value,
        `code …${row.lastFour} (batch ${row.batchId})`,
      );
    }, LEDGER_TRANSACTION);
    await attempt.succeeded();
    await this.events.teamChanged(teamId);
    this.logger.log({
      message: 'redemption code redeemed',
      teamId,
      by: actor.id,
      entryId: Number(entry.id),
    });
    return {
      credited: Number(entry.amount),
      balance: Number(entry.balanceAfter),
      entryId: Number(entry.id),
    };
  }
}

function toBatchResponse(batch: RedemptionBatch, used: number): RedemptionBatchResponse {
  return {
    id: batch.id,
    value: Number(batch.value),
    count: batch.count,
    used,
    unused: batch.count - used,
    note: batch.note,
    expiresAt: batch.expiresAt,
    expired: batch.expiresAt !== null && batch.expiresAt.getTime() <= Date.now(),
    createdById: batch.createdById,
    createdAt: batch.createdAt,
  };
}
