import {
  levelOfSubject,
  periodEnd,
  periodStart,
  subjectsCovering,
  type BudgetLevelName,
  type BudgetPeriodName,
} from '@switchyard/domain';
import { type TokenBudget } from '../auth/token-directory.js';
import { type KeyRow, type SpendRow } from './billing.repository.js';

// What a token may still spend, from what it and the budgets covering it have spent
// (docs/specification.md, "A key's own spending"). Pure: the controller reads the
// rows, this says what they mean. Money is integer micro-dollars throughout; only the
// one-api shapes turn it into dollars and cents at the very end.

/** One budget covering the key, with what was spent in its current period. */
export interface KeyBudget {
  level: BudgetLevelName;
  subject: string;
  period: BudgetPeriodName;
  amount: number;
  spent: number;
  /** Never below zero: a budget lowered below its spend has nothing left. */
  remaining: number;
  softPercent: number | null;
  periodStart: Date;
  /** Null for a budget that never resets (`none`). */
  resetsAt: Date | null;
}

export interface KeyBilling {
  key: KeyRow;
  /** The token's lifetime quota: null when it has none. */
  quota: { limit: number; spent: number; remaining: number } | null;
  /** Lifetime spend of the token, as metering settled it. */
  spent: number;
  budgets: KeyBudget[];
  /** The prepaid balance its team runs on; null when the team runs on budgets or there is none. */
  teamBalance: number | null;
  /** The least of every limit left: what the key may still spend; null when nothing limits it. */
  available: number | null;
}

/**
 * Every budget covering the token, in the order refusals name them (narrowest first).
 * `budgets` are the token directory's: the ones the edge enforces on the key's requests.
 */
export function keyBilling(
  key: KeyRow,
  budgets: TokenBudget[],
  spends: SpendRow[],
  now: Date,
  zone: string,
): KeyBilling {
  const spent = Number(key.usedQuota);
  const quota =
    key.quota === null
      ? null
      : {
          limit: Number(key.quota),
          spent,
          remaining: Math.max(0, Number(key.quota) - spent),
        };
  const order = subjectsCovering({ tokenId: key.id, teamId: key.teamId, ownerId: key.ownerId });
  const covering = order.flatMap((subject) => {
    const budget = budgets.find((b) => b.subject === subject);
    if (!budget) return [];
    const start = periodStart(budget.period, now, zone);
    const row = spends.find(
      (s) => s.subject === subject && s.periodStart.getTime() === start.getTime(),
    );
    const amount = budget.amount;
    const used = row ? Number(row.spent) : 0;
    return [
      {
        level: levelOfSubject(subject),
        subject,
        period: budget.period,
        amount,
        spent: used,
        remaining: Math.max(0, amount - used),
        softPercent: budget.softPercent,
        periodStart: start,
        resetsAt: periodEnd(budget.period, now, zone),
      } satisfies KeyBudget,
    ];
  });
  const teamBalance =
    key.teamBilling === 'balance' && key.teamBalance !== null
      ? Math.max(0, Number(key.teamBalance))
      : null;
  const limits = [
    ...(quota ? [quota.remaining] : []),
    ...covering.map((b) => b.remaining),
    ...(teamBalance !== null ? [teamBalance] : []),
  ];
  return {
    key,
    quota,
    spent,
    budgets: covering,
    teamBalance,
    available: limits.length > 0 ? Math.min(...limits) : null,
  };
}

/** The subjects and period starts to read spends for, given the budgets found. */
export function spendQuery(budgets: TokenBudget[], now: Date, zone: string): Date[] {
  const starts = new Map<number, Date>();
  for (const budget of budgets) {
    const start = periodStart(budget.period, now, zone);
    starts.set(start.getTime(), start);
  }
  return [...starts.values()];
}

/** one-api's "unlimited": the hard limit it reports for a token without a quota. */
export const UNLIMITED_USD = 100_000_000;

const MICROS_PER_USD = 1_000_000;
const MICROS_PER_CENT = 10_000;

/**
 * `GET /v1/dashboard/billing/subscription` as one-api answers it: chat clients show
 * `hard_limit_usd - total_usage / 100` as the key's balance, so the hard limit is what was
 * spent plus what is still available.
 */
export function subscriptionOf(billing: KeyBilling): Record<string, unknown> {
  const hardLimit =
    billing.available === null
      ? UNLIMITED_USD
      : (billing.spent + billing.available) / MICROS_PER_USD;
  const expiresAt = billing.key.expiresAt;
  return {
    object: 'billing_subscription',
    has_payment_method: true,
    soft_limit_usd: hardLimit,
    hard_limit_usd: hardLimit,
    system_hard_limit_usd: hardLimit,
    access_until: expiresAt ? Math.floor(expiresAt.getTime() / 1000) : 0,
  };
}

/** `GET /v1/dashboard/billing/usage` as one-api answers it: lifetime spend, in cents. */
export function usageOf(billing: KeyBilling): Record<string, unknown> {
  return { object: 'list', total_usage: billing.spent / MICROS_PER_CENT };
}

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** `GET /v1/key/info`: the key's own settings and spending, money in micro-dollars. */
export function keyInfoOf(billing: KeyBilling): Record<string, unknown> {
  const { key } = billing;
  return {
    object: 'key_info',
    id: key.id,
    name: key.name,
    last_four: key.lastFour,
    status: key.status,
    created_at: iso(key.createdAt),
    expires_at: iso(key.expiresAt),
    group: key.group,
    // Empty: every model the gateway serves to its group (the team's list still applies).
    models: key.models,
    rate_limit: key.rateLimit,
    team:
      key.teamId === null
        ? null
        : {
            id: key.teamId,
            name: key.teamName,
            models: key.teamModels ?? [],
            rate_limit: key.teamRateLimit,
            billing: key.teamBilling,
            balance: billing.teamBalance,
          },
    spent: billing.spent,
    quota: billing.quota,
    budgets: billing.budgets.map((budget) => ({
      level: budget.level,
      period: budget.period,
      amount: budget.amount,
      spent: budget.spent,
      remaining: budget.remaining,
      soft_percent: budget.softPercent,
      period_start: iso(budget.periodStart),
      resets_at: iso(budget.resetsAt),
    })),
    available: billing.available,
    unit: 'micro_usd',
  };
}
