import { GatewayError } from '@switchyard/contracts';
import {
  balanceAccount,
  budgetAccount,
  levelOfSubject,
  periodSpan,
  type BudgetPeriodName,
} from '@switchyard/domain';
import { spendAccount } from '@switchyard/spend';
import { type GatewayToken } from '../auth/token-directory.js';

// Which spend ledger accounts pay for a token's request, each with its limit, in the order
// a refusal names the first that has no room: the token's quota, then its budgets from
// the narrowest (token, member, team, gateway), then its team's prepaid balance
// (docs/budgets.md, "Reservations").

export type PayingAccount =
  | { kind: 'quota'; account: string; limit: number }
  | {
      kind: 'budget';
      account: string;
      limit: number;
      subject: string;
      period: BudgetPeriodName;
      /** When the period ends and the budget resets; null for period `none`. */
      resetsAt: Date | null;
    }
  | { kind: 'balance'; account: string; limit: number; teamId: number };

/** The accounts paying for a request of `token` arriving at `at`; empty when nothing limits it. */
export function accountsPaying(token: GatewayToken, at: Date, zone: string): PayingAccount[] {
  const paying: PayingAccount[] = [];
  if (token.quota !== null) {
    paying.push({ kind: 'quota', account: spendAccount('token', token.id), limit: token.quota });
  }
  for (const budget of token.budgets) {
    const span = periodSpan(budget.period, at, zone);
    paying.push({
      kind: 'budget',
      account: budgetAccount(budget.subject, span.start),
      limit: budget.amount,
      subject: budget.subject,
      period: budget.period,
      resetsAt: span.end,
    });
  }
  if (token.balanceLimit !== null && token.teamId !== null) {
    paying.push({
      kind: 'balance',
      account: balanceAccount(token.teamId),
      limit: token.balanceLimit,
      teamId: token.teamId,
    });
  }
  return paying;
}

const LEVEL_NAMES = {
  token: "This token's budget",
  member: "Your budget in this token's team",
  team: "This token's team budget",
  gateway: "The gateway's budget",
} as const;

/**
 * The 429 for the account that had no room. A budget: `budget_exceeded`, naming its level
 * and when it resets, with `Retry-After` until then (none for a budget that never resets).
 * A quota or a balance: `insufficient_quota`, which clients know not to retry: only an
 * administrator or a top-up frees it.
 */
export function refusal(paying: PayingAccount, available: number, now: number): GatewayError {
  const left =
    available > 0
      ? `${available} micro-dollars are left after the requests in flight, less than this request may cost`
      : 'nothing is left after the requests in flight';
  if (paying.kind === 'quota') {
    return new GatewayError(
      'insufficient_quota',
      available > 0
        ? `This token's quota cannot cover this request: ${available} micro-dollars are left after the requests in flight. Retry when they finish, or ask an administrator to raise it.`
        : "This token's quota is used up, or held by its requests in flight. Retry when they finish, or ask an administrator to raise it.",
    );
  }
  if (paying.kind === 'balance') {
    return new GatewayError(
      'insufficient_quota',
      `Your team's prepaid balance cannot cover this request: ${left}. Top it up with a redemption code, or ask an administrator to credit it.`,
    );
  }
  const level = LEVEL_NAMES[levelOfSubject(paying.subject)];
  if (paying.resetsAt === null) {
    return new GatewayError(
      'budget_exceeded',
      `${level} (${paying.subject}, ${paying.limit} micro-dollars) is spent: ${left}. It does not reset (period none); ask an administrator to raise it.`,
    );
  }
  return new GatewayError(
    'budget_exceeded',
    `${level} (${paying.subject}, ${paying.limit} micro-dollars a ${paying.period}) is spent for this period: ${left}. It resets at ${paying.resetsAt.toISOString()}.`,
    null,
    { retryAfterMs: Math.max(0, paying.resetsAt.getTime() - now) },
  );
}
