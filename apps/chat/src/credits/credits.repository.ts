import { Injectable } from '@nestjs/common';
import {
  Prisma,
  PrismaService,
  type CreditEntry,
  type CreditHold,
  type CreditKind,
} from '@switchyard/db';

// Every balance change is one conditional UPDATE of the user's row and one ledger row, in
// one transaction (docs/credits.md, "The ledger"). The UPDATE's row lock orders concurrent
// changes of one user, and `RETURNING` gives the balance this change left, so each entry's
// `balanceAfter` is exact and the balance stays the sum of the entries.

export interface CreditChange {
  userId: number;
  kind: CreditKind;
  /** Signed: negative takes credits away. */
  amount: number;
  reason: string;
  actorId?: number | null;
  requestId?: string | null;
  conversationId?: string | null;
  /** The model of a reply's freeze, for the spend per model. */
  model?: string | null;
  /** Take the balance below zero if need be (an administrator's forced adjustment). */
  allowNegative?: boolean;
}

export type ChangeResult =
  | { ok: true; balance: number; entry: CreditEntry }
  | { ok: false; reason: 'no_user' | 'too_low'; balance: number | null };

export interface EntryPage {
  rows: CreditEntry[];
  total: number;
}

export type Tx = Prisma.TransactionClient;

@Injectable()
export class CreditsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async balanceOf(userId: number): Promise<number | null> {
    const user = await this.prisma.chatUser.findUnique({
      where: { id: userId },
      select: { credits: true },
    });
    return user?.credits ?? null;
  }

  /** Applies the change, or refuses it when it would take the balance below zero. */
  change(change: CreditChange): Promise<ChangeResult> {
    return this.prisma.$transaction((tx) => this.changeIn(tx, change));
  }

  /** The change inside a transaction of the caller's, with what else it writes. */
  async changeIn(tx: Tx, change: CreditChange): Promise<ChangeResult> {
    const allowNegative = change.allowNegative === true || change.amount >= 0;
    const updated = await tx.$queryRaw<{ credits: number }[]>`
      UPDATE "ChatUser" SET "credits" = "credits" + ${change.amount}::int
      WHERE "id" = ${change.userId}
        AND (${allowNegative}::boolean OR "credits" + ${change.amount}::int >= 0)
      RETURNING "credits"`;
    const row = updated[0];
    if (!row) {
      const balance = await tx.chatUser.findUnique({
        where: { id: change.userId },
        select: { credits: true },
      });
      return balance
        ? { ok: false, reason: 'too_low', balance: balance.credits }
        : { ok: false, reason: 'no_user', balance: null };
    }
    const entry = await tx.creditEntry.create({
      data: {
        userId: change.userId,
        kind: change.kind,
        amount: change.amount,
        balanceAfter: row.credits,
        reason: change.reason,
        actorId: change.actorId ?? null,
        requestId: change.requestId ?? null,
        conversationId: change.conversationId ?? null,
        model: change.model ?? null,
      },
    });
    return { ok: true, balance: row.credits, entry };
  }

  /**
   * A reply's freeze: the `spend` entry and the hold that marks it unsettled, together.
   * `change.requestId` names the hold.
   */
  freeze(change: CreditChange & { requestId: string }): Promise<ChangeResult> {
    return this.prisma.$transaction(async (tx) => {
      const result = await this.changeIn(tx, change);
      if (result.ok) {
        await tx.creditHold.create({
          data: {
            requestId: change.requestId,
            userId: change.userId,
            frozen: -change.amount,
            conversationId: change.conversationId ?? null,
          },
        });
      }
      return result;
    });
  }

  /**
   * Ends a hold and applies its settlement (`refund` null: nothing to return), together;
   * false when the hold was already ended, by the sweeper or an earlier settlement, so a
   * freeze is returned at most once.
   */
  release(requestId: string, refund: CreditChange | null): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const ended = await tx.creditHold.deleteMany({ where: { requestId } });
      if (ended.count === 0) return false;
      if (refund) await this.changeIn(tx, refund);
      return true;
    });
  }

  /** Holds made before `cutoff`, oldest first: replies that should have settled by now. */
  staleHolds(cutoff: Date, take: number): Promise<CreditHold[]> {
    return this.prisma.creditHold.findMany({
      where: { createdAt: { lt: cutoff } },
      orderBy: { createdAt: 'asc' },
      take,
    });
  }

  /** The user's entries, newest first, optionally of one kind. */
  async entries(
    userId: number,
    kind: CreditKind | undefined,
    skip: number,
    take: number,
  ): Promise<EntryPage> {
    const where = { userId, ...(kind ? { kind } : {}) };
    const [rows, total] = await this.prisma.$transaction([
      this.prisma.creditEntry.findMany({ where, orderBy: { id: 'desc' }, skip, take }),
      this.prisma.creditEntry.count({ where }),
    ]);
    return { rows, total };
  }

  /** The sum of the user's ledger, for the checks that the balance agrees with it. */
  async ledgerSum(userId: number): Promise<number> {
    const sum = await this.prisma.creditEntry.aggregate({
      where: { userId },
      _sum: { amount: true },
    });
    return sum._sum.amount ?? 0;
  }
}
