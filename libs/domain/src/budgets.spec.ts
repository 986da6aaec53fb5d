import {
  applyMultiplier,
  balanceAccount,
  budgetAccount,
  budgetSubject,
  isTimeZone,
  levelOfSubject,
  LIFETIME_START,
  parseBalanceAccount,
  parseBudgetAccount,
  periodEnd,
  periodSpan,
  periodStart,
  softThresholdReached,
  subjectsCovering,
} from './budgets.js';

const at = (iso: string) => new Date(iso);

describe('budget subjects', () => {
  it('names every level, narrowest first, and reads the level back', () => {
    expect(subjectsCovering({ tokenId: 42, teamId: 3, ownerId: 7 })).toEqual([
      'token:42',
      'member:3:7',
      'team:3',
      'gateway',
    ]);
    expect(subjectsCovering({ tokenId: 42, teamId: 3, ownerId: null })).toEqual([
      'token:42',
      'team:3',
      'gateway',
    ]);
    expect(subjectsCovering({ tokenId: 42, teamId: null, ownerId: null })).toEqual([
      'token:42',
      'gateway',
    ]);
    expect(levelOfSubject(budgetSubject('member', 3, 7))).toBe('member');
    expect(levelOfSubject('gateway')).toBe('gateway');
    expect(() => levelOfSubject('tenant:1')).toThrow(RangeError);
  });
});

describe('periods', () => {
  it('starts days, weeks (Monday) and months at midnight UTC by default', () => {
    const now = at('2026-11-28T18:30:00Z'); // a Saturday
    expect(periodStart('day', now)).toEqual(at('2026-11-28T00:00:00Z'));
    expect(periodStart('week', now)).toEqual(at('2026-11-23T00:00:00Z'));
    expect(periodStart('month', now)).toEqual(at('2026-11-01T00:00:00Z'));
    expect(periodStart('none', now)).toEqual(LIFETIME_START);
    expect(periodEnd('day', now)).toEqual(at('2026-11-29T00:00:00Z'));
    expect(periodEnd('week', now)).toEqual(at('2026-11-30T00:00:00Z'));
    expect(periodEnd('month', now)).toEqual(at('2026-12-01T00:00:00Z'));
    expect(periodEnd('month', at('2026-12-31T23:59:59Z'))).toEqual(at('2027-01-01T00:00:00Z'));
    expect(periodEnd('none', now)).toBeNull();
  });

  it('follows the configured time zone, across daylight-saving changes', () => {
    // 23:30 UTC on the 28th is already the 29th in Tokyo.
    expect(periodStart('day', at('2026-11-28T23:30:00Z'), 'Asia/Tokyo')).toEqual(
      at('2026-11-28T15:00:00Z'),
    );
    // Berlin leaves summer time on 2026-10-25: that day has 25 hours.
    const berlin = at('2026-10-25T12:00:00Z');
    expect(periodStart('day', berlin, 'Europe/Berlin')).toEqual(at('2026-10-24T22:00:00Z'));
    expect(periodEnd('day', berlin, 'Europe/Berlin')).toEqual(at('2026-10-25T23:00:00Z'));
    expect(periodStart('month', berlin, 'Europe/Berlin')).toEqual(at('2026-09-30T22:00:00Z'));
    // New York's week starting Monday 2026-03-09 follows the change on Sunday the 8th.
    expect(periodStart('week', at('2026-03-11T12:00:00Z'), 'America/New_York')).toEqual(
      at('2026-03-09T04:00:00Z'),
    );
  });

  it('puts the instant of a boundary in the new period', () => {
    const boundary = at('2026-12-01T00:00:00Z');
    expect(periodStart('month', boundary)).toEqual(boundary);
    expect(periodStart('month', new Date(boundary.getTime() - 1))).toEqual(
      at('2026-11-01T00:00:00Z'),
    );
  });

  it('knows time zones', () => {
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });
});

describe('money rules', () => {
  it('applies a price group, rounding up', () => {
    expect(applyMultiplier(1000n, 1_000_000)).toBe(1000n);
    expect(applyMultiplier(1000n, 800_000)).toBe(800n);
    expect(applyMultiplier(1n, 500_000)).toBe(1n);
    expect(applyMultiplier(3n, 1_500_000)).toBe(5n);
  });

  it('reaches a soft threshold at its percentage', () => {
    expect(softThresholdReached(79n, 100n, 80)).toBe(false);
    expect(softThresholdReached(80n, 100n, 80)).toBe(true);
    expect(softThresholdReached(1_000n, 100n, null)).toBe(false);
  });
});

describe('spend ledger accounts of budgets', () => {
  it('names a period of a budget and a balance, and reads the names back', () => {
    const start = new Date('2026-12-01T00:00:00.000Z');
    const account = budgetAccount('member:3:7', start);
    expect(account).toBe(`budget:member:3:7@${start.getTime()}`);
    expect(parseBudgetAccount(account)).toEqual({ subject: 'member:3:7', periodStart: start });
    expect(balanceAccount(3)).toBe('balance:team:3');
    expect(parseBalanceAccount('balance:team:3')).toBe(3);
    expect(parseBudgetAccount('token:3')).toBeNull();
    expect(parseBalanceAccount('budget:team:3@0')).toBeNull();
  });
});

describe('period spans', () => {
  it('gives the start and end of the period, the same span until the period ends', () => {
    const first = periodSpan('day', at('2026-11-28T10:00:00Z'), 'Europe/Berlin');
    expect(first).toEqual({
      start: at('2026-11-27T23:00:00Z'),
      end: at('2026-11-28T23:00:00Z'),
    });
    expect(periodSpan('day', at('2026-11-28T22:59:59.999Z'), 'Europe/Berlin')).toBe(first);
    expect(periodSpan('day', at('2026-11-28T23:00:00Z'), 'Europe/Berlin')).toEqual({
      start: at('2026-11-28T23:00:00Z'),
      end: at('2026-11-29T23:00:00Z'),
    });
    // An earlier instant (a late settlement) is answered for its own period.
    expect(periodSpan('day', at('2026-11-28T10:00:00Z'), 'Europe/Berlin')).toEqual(first);
    expect(periodSpan('none', at('2026-11-28T10:00:00Z'))).toEqual({
      start: LIFETIME_START,
      end: null,
    });
  });
});
