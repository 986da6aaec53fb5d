import { Injectable } from '@nestjs/common';
import { Prisma, type BalanceEntry, type BalanceEntryKind } from '@switchyard/db';
import { type Db } from './db.js';

// A team's prepaid balance and its ledger (docs/teams.md, "Balances"): administrators'
// credits and adjustments and members' redemptions (admin) and requests' debits (metering)
// all change it here, so the rule holds for every writer: each change is one BalanceEntry
// whose `balanceAfter` is the balance the same statement left, and `Team.balance` is always
// the sum of the team's entries.

export interface BalanceChange {
  teamId: number;
  kind: BalanceEntryKind;
  /** Signed micro-dollars: negative for a debit or a downward adjustment. */
  amount: bigint;
  reason: string;
  /** The administrator or member who acted; null for a request's debit. */
  actorId: number | null;
  /** The request a debit paid for (unique: a request is debited once). */
  requestId?: string | null;
  /** A debit may take the balance below zero (the request was already served); others may not. */
  allowNegative?: boolean;
}

export type BalanceResult =
  | { kind: 'applied'; entry: BalanceEntry }
  | { kind: 'no_team' }
  | { kind: 'below_zero'; balance: bigint };

@Injectable()
export class BalanceLedger {
  /**
   * Applies one change inside the caller's transaction `db`. The balance moves in a single
   * `UPDATE … RETURNING`, which also locks the team's row until the transaction ends, so
   * concurrent changes queue and each entry's `balanceAfter` follows the one before.
   */
  async apply(db: Db, change: BalanceChange): Promise<BalanceResult> {
    const allowNegative = change.allowNegative ?? false;
    const updated = await db.$queryRaw<{ balance: bigint }[]>(Prisma.sql`
      UPDATE "Team" SET balance = balance + ${change.amount}, "updatedAt" = now()
       WHERE id = ${change.teamId}
         AND (${allowNegative} OR balance + ${change.amount} >= 0)
      RETURNING balance`);
    const row = updated[0];
    if (!row) {
      const team = await db.team.findUnique({
        where: { id: change.teamId },
        select: { balance: true },
      });
      return team ? { kind: 'below_zero', balance: team.balance } : { kind: 'no_team' };
    }
    const entry = await db.balanceEntry.create({
      data: {
        teamId: change.teamId,
        kind: change.kind,
        amount: change.amount,
        balanceAfter: row.balance,
        reason: change.reason.slice(0, 200),
        actorId: change.actorId,
        requestId: change.requestId ?? null,
      },
    });
    return { kind: 'applied', entry };
  }
}
