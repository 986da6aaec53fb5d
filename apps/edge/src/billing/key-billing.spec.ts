import { type TokenBudget } from '../auth/token-directory.js';
import { type KeyRow } from './billing.repository.js';
import { keyBilling, subscriptionOf, usageOf } from './key-billing.js';

// What a key may still spend, from its rows: the least of everything left, never below
// zero, and one-api's numbers built so that a chat client's balance is exactly that.

const key = (overrides: Partial<KeyRow> = {}): KeyRow => ({
  id: 42,
  name: 'bot',
  lastFour: 'abcd',
  status: 'enabled',
  expiresAt: null,
  quota: null,
  usedQuota: '0',
  models: [],
  group: 'default',
  rateLimit: null,
  createdAt: new Date('2026-11-01T00:00:00Z'),
  teamId: null,
  ownerId: null,
  teamName: null,
  teamModels: null,
  teamRateLimit: null,
  teamBilling: null,
  teamBalance: null,
  ...overrides,
});

const budget = (subject: string, amount: number, period: TokenBudget['period']): TokenBudget => ({
  subject,
  amount,
  period,
  softPercent: null,
});

const NOW = new Date('2026-11-28T18:00:00Z');

describe('a key’s own billing', () => {
  it('takes the least of quota, budgets and a team balance as what is available', () => {
    const billing = keyBilling(
      key({
        quota: '10000000',
        usedQuota: '2000000',
        teamId: 3,
        ownerId: 7,
        teamBilling: 'balance',
        teamBalance: '750000',
      }),
      [budget('token:42', 5_000_000, 'month'), budget('team:3', 9_000_000, 'day')],
      [
        { subject: 'token:42', periodStart: new Date('2026-11-01T00:00:00Z'), spent: '1000000' },
        { subject: 'team:3', periodStart: new Date('2026-11-28T00:00:00Z'), spent: '8000000' },
      ],
      NOW,
      'UTC',
    );
    expect(billing.budgets.map((b) => [b.subject, b.remaining])).toEqual([
      ['token:42', 4_000_000],
      ['team:3', 1_000_000],
    ]);
    expect(billing.available).toBe(750_000);
    const subscription = subscriptionOf(billing);
    expect(subscription.hard_limit_usd).toBe(2.75);
    expect(usageOf(billing)).toEqual({ object: 'list', total_usage: 200 });
  });

  it('has nothing left, not less, under a budget lowered below its spend', () => {
    const billing = keyBilling(
      key({ usedQuota: '3000000' }),
      [budget('gateway', 1_000_000, 'none')],
      [{ subject: 'gateway', periodStart: new Date(0), spent: '2500000' }],
      NOW,
      'UTC',
    );
    expect(billing.budgets[0]).toMatchObject({ remaining: 0, resetsAt: null });
    expect(billing.available).toBe(0);
    expect(subscriptionOf(billing).hard_limit_usd).toBe(3);
  });

  it('counts only the current period’s spend, in the configured zone', () => {
    const billing = keyBilling(
      key(),
      [budget('token:42', 1_000_000, 'day')],
      [
        // Tokyo's 28th began at 15:00 UTC on the 27th; UTC's row of the 28th is another period.
        { subject: 'token:42', periodStart: new Date('2026-11-27T15:00:00Z'), spent: '100000' },
        { subject: 'token:42', periodStart: new Date('2026-11-28T00:00:00Z'), spent: '900000' },
      ],
      NOW,
      'Asia/Tokyo',
    );
    // 18:00 UTC on the 28th is 03:00 on the 29th in Tokyo: a new day, nothing spent yet.
    expect(billing.budgets[0]).toMatchObject({
      spent: 0,
      periodStart: new Date('2026-11-28T15:00:00Z'),
      resetsAt: new Date('2026-11-29T15:00:00Z'),
    });
  });
});
