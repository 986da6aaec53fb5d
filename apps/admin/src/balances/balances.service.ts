import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { PrismaService, type BalanceEntry, type BalanceEntryKind } from '@switchyard/db';
import { BalanceLedger, type Db } from '@switchyard/gateway-store';
import { skipTake, type Page } from '@switchyard/service';
import { AuditService } from '../audit/audit.service.js';
import { type Actor } from '../common/actor.js';
import { type PageQuery } from '../common/pagination.js';
import { ChangeEvents } from '../events/change-events.js';
import {
  type AdjustBalanceDto,
  type BalanceEntryResponse,
  type CreditBalanceDto,
} from './balances.dto.js';

/**
 * Changes of one team queue on its row lock: under a burst a transaction may wait for the
 * lock well past Prisma's 5 s default, which is not a failure.
 */
export const LEDGER_TRANSACTION = { maxWait: 10_000, timeout: 30_000 };

/**
 * Prepaid balances of `balance` teams (docs/teams.md, "Balances"): every change is a ledger
 * row written by `BalanceLedger` (libs/gateway-store) with the balance it left, in the
 * transaction that moves `Team.balance`.
 */
@Injectable()
export class BalancesService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly ledger: BalanceLedger,
    private readonly audit: AuditService,
    private readonly events: ChangeEvents,
  ) {}

  credit(actor: Actor, teamId: number, dto: CreditBalanceDto): Promise<BalanceEntryResponse> {
    return this.change(actor, teamId, 'credit', BigInt(dto.amount), dto.reason);
  }

  adjust(actor: Actor, teamId: number, dto: AdjustBalanceDto): Promise<BalanceEntryResponse> {
    return this.change(actor, teamId, 'adjust', BigInt(dto.amount), dto.reason);
  }

  /** Applies one entry in `db` (a redemption's transaction), refusing a team not on a balance. */
  async apply(
    db: Db,
    actor: Actor,
    teamId: number,
    kind: BalanceEntryKind,
    amount: bigint,
    reason: string,
  ): Promise<BalanceEntry> {
    const team = await db.team.findUnique({
      where: { id: teamId },
      select: { billing: true, name: true },
    });
    if (!team) throw new ApiError('not_found', `No team with id ${teamId}`);
    if (team.billing !== 'balance') {
      throw new ApiError(
        'conflict',
        `Team ${team.name} spends against budgets, not a balance; set its billing to balance first`,
      );
    }
    const result = await this.ledger.apply(db, {
      teamId,
      kind,
      amount,
      reason: reason.trim(),
      actorId: actor.id,
    });
    if (result.kind === 'no_team') throw new ApiError('not_found', `No team with id ${teamId}`);
    if (result.kind === 'below_zero') {
      throw new ApiError(
        'balance_below_zero',
        `The balance is ${result.balance} micro-dollars; taking ${-amount} would leave it below zero`,
      );
    }
    await this.audit.record(
      {
        actor,
        action: `balance.${kind}`,
        target: { type: 'team', id: teamId },
        details: {
          entryId: Number(result.entry.id),
          amount: Number(amount),
          balanceAfter: Number(result.entry.balanceAfter),
          reason: result.entry.reason,
        },
      },
      db,
    );
    return result.entry;
  }

  async ledgerOf(teamId: number, query: PageQuery): Promise<Page<BalanceEntryResponse>> {
    if (!(await this.prisma.team.findUnique({ where: { id: teamId }, select: { id: true } }))) {
      throw new ApiError('not_found', `No team with id ${teamId}`);
    }
    const [rows, total] = await Promise.all([
      this.prisma.balanceEntry.findMany({
        where: { teamId },
        orderBy: { id: 'desc' },
        ...skipTake(query),
      }),
      this.prisma.balanceEntry.count({ where: { teamId } }),
    ]);
    return { items: rows.map(toBalanceEntryResponse), total };
  }

  private async change(
    actor: Actor,
    teamId: number,
    kind: BalanceEntryKind,
    amount: bigint,
    reason: string,
  ): Promise<BalanceEntryResponse> {
    const entry = await this.prisma.$transaction(
      (db) => this.apply(db, actor, teamId, kind, amount, reason),
      LEDGER_TRANSACTION,
    );
    await this.events.teamChanged(teamId);
    return toBalanceEntryResponse(entry);
  }
}

export function toBalanceEntryResponse(entry: BalanceEntry): BalanceEntryResponse {
  return {
    id: Number(entry.id),
    teamId: entry.teamId,
    kind: entry.kind,
    amount: Number(entry.amount),
    balanceAfter: Number(entry.balanceAfter),
    reason: entry.reason,
    actorId: entry.actorId,
    requestId: entry.requestId,
    createdAt: entry.createdAt,
  };
}
