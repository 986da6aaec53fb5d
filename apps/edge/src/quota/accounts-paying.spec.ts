import { type GatewayToken } from '../auth/token-directory.js';
import { accountsPaying, refusal } from './accounts-paying.js';

// Which accounts pay for a request, and how the one without room is named to the client
// (docs/budgets.md, "Reservations" and "Errors").

const token = (fields: Partial<GatewayToken> = {}): GatewayToken => ({
  id: 42,
  keyHash: 'hash',
  status: 'enabled',
  expiresAt: null,
  exhausted: false,
  models: [],
  allowIps: null,
  group: 'default',
  rateLimit: null,
  hasQuota: false,
  quota: null,
  teamId: null,
  ownerId: null,
  priceMultiplier: 1_000_000,
  balanceLimit: null,
  budgets: [],
  requestLog: false,
  ...fields,
});

const at = new Date('2026-11-28T18:30:00.000Z');

describe('accounts paying for a request', () => {
  it('is nothing for a token nothing limits', () => {
    expect(accountsPaying(token(), at, 'UTC')).toEqual([]);
  });

  it('lists the quota, the budgets narrowest first with their periods, then the balance', () => {
    const paying = accountsPaying(
      token({
        quota: 5_000,
        teamId: 3,
        ownerId: 7,
        balanceLimit: 9_000,
        budgets: [
          { subject: 'token:42', amount: 100, period: 'none', softPercent: null },
          { subject: 'member:3:7', amount: 200, period: 'day', softPercent: null },
          { subject: 'team:3', amount: 300, period: 'week', softPercent: null },
          { subject: 'gateway', amount: 400, period: 'month', softPercent: null },
        ],
      }),
      at,
      'UTC',
    );
    expect(paying.map((p) => [p.account, p.limit])).toEqual([
      ['token:42', 5_000],
      ['budget:token:42@0', 100],
      [`budget:member:3:7@${Date.parse('2026-11-28T00:00:00Z')}`, 200],
      // 2026-11-28 is a Saturday: the week began on Monday the 23rd.
      [`budget:team:3@${Date.parse('2026-11-23T00:00:00Z')}`, 300],
      [`budget:gateway@${Date.parse('2026-11-01T00:00:00Z')}`, 400],
      ['balance:team:3', 9_000],
    ]);
  });

  it('starts periods at midnight in the configured zone', () => {
    const [day] = accountsPaying(
      token({ budgets: [{ subject: 'token:42', amount: 1, period: 'day', softPercent: null }] }),
      at,
      'Asia/Tokyo',
    );
    // 18:30 UTC is 03:30 on the 29th in Tokyo, whose day began at 15:00 UTC on the 28th.
    expect(day!.account).toBe(`budget:token:42@${Date.parse('2026-11-28T15:00:00Z')}`);
  });
});

describe('refusals', () => {
  const now = at.getTime();

  it('names the budget level and when it resets, with Retry-After until then', () => {
    const [team] = accountsPaying(
      token({
        teamId: 3,
        budgets: [{ subject: 'team:3', amount: 300, period: 'day', softPercent: null }],
      }),
      at,
      'UTC',
    );
    const error = refusal(team!, 12, now);
    expect(error.status).toBe(429);
    expect(error.toBody().error).toMatchObject({
      code: 'budget_exceeded',
      type: 'insufficient_quota',
    });
    expect(error.message).toContain("This token's team budget (team:3");
    expect(error.message).toContain('It resets at 2026-11-29T00:00:00.000Z');
    expect(error.headers()['retry-after']).toBe(String(5.5 * 3600));
  });

  it('says a budget of period none does not reset, with no Retry-After', () => {
    const [gateway] = accountsPaying(
      token({ budgets: [{ subject: 'gateway', amount: 300, period: 'none', softPercent: null }] }),
      at,
      'UTC',
    );
    const error = refusal(gateway!, 0, now);
    expect(error.code).toBe('budget_exceeded');
    expect(error.message).toContain("The gateway's budget");
    expect(error.message).toContain('does not reset');
    expect(error.headers()['retry-after']).toBeUndefined();
  });

  it('refuses an empty balance as insufficient_quota, not to be retried', () => {
    const [balance] = accountsPaying(token({ teamId: 3, balanceLimit: 10 }), at, 'UTC');
    const error = refusal(balance!, 0, now);
    expect(error.code).toBe('insufficient_quota');
    expect(error.message).toContain('prepaid balance');
    expect(error.headers()['x-should-retry']).toBe('false');
  });
});
