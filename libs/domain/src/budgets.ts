// Budgets: who a request's spend counts against, and over which period. The edge reserves
// against every budget covering a request, metering settles them, the admin service and the
// dashboard show them: all name subjects and compute periods here, so a budget that the
// edge refuses at is the one the dashboard shows full (docs/budgets.md).

export type BudgetLevelName = 'token' | 'member' | 'team' | 'gateway';
export type BudgetPeriodName = 'none' | 'day' | 'week' | 'month';

export const BUDGET_LEVELS: readonly BudgetLevelName[] = ['token', 'member', 'team', 'gateway'];
export const BUDGET_PERIODS: readonly BudgetPeriodName[] = ['none', 'day', 'week', 'month'];

/** The start of period `none`: a budget that never resets has one period since the epoch. */
export const LIFETIME_START = new Date(0);

/** A price group's multiplier that leaves prices as listed, in parts per million. */
export const UNIT_MULTIPLIER = 1_000_000;

/** What a request's spend counts against: its token, its owner within the team, the team, the gateway. */
export interface BudgetOwners {
  tokenId: number;
  teamId: number | null;
  /** The member who owns the token; null for an administrator's token. */
  ownerId: number | null;
}

/** The subject of one budget, as `Budget.subject` and `BudgetSpend.subject` store it. */
export function budgetSubject(level: 'token', tokenId: number): string;
export function budgetSubject(level: 'member', teamId: number, userId: number): string;
export function budgetSubject(level: 'team', teamId: number): string;
export function budgetSubject(level: 'gateway'): string;
export function budgetSubject(level: BudgetLevelName, ...ids: number[]): string {
  return level === 'gateway' ? 'gateway' : [level, ...ids].join(':');
}

/** Every budget subject that may cover a request, narrowest first (the order refusals name). */
export function subjectsCovering(owners: BudgetOwners): string[] {
  const subjects = [budgetSubject('token', owners.tokenId)];
  if (owners.teamId !== null) {
    if (owners.ownerId !== null)
      subjects.push(budgetSubject('member', owners.teamId, owners.ownerId));
    subjects.push(budgetSubject('team', owners.teamId));
  }
  subjects.push(budgetSubject('gateway'));
  return subjects;
}

/**
 * The spend ledger account of a budget's period (libs/spend): its subject and the period's
 * start, so a new period is a new account, seeded from its own `BudgetSpend` row
 * (`budget:team:3@1764547200000`).
 */
export function budgetAccount(subject: string, periodStart: Date): string {
  return `budget:${subject}@${periodStart.getTime()}`;
}

/** The spend ledger account of a team's prepaid balance (`balance:team:3`). */
export function balanceAccount(teamId: number): string {
  return `balance:team:${teamId}`;
}

/** What a budget account names: its subject and period start; null for another account. */
export function parseBudgetAccount(account: string): { subject: string; periodStart: Date } | null {
  const match = /^budget:(.+)@(\d+)$/.exec(account);
  return match ? { subject: match[1]!, periodStart: new Date(Number(match[2])) } : null;
}

/** The team of a balance account; null for another account. */
export function parseBalanceAccount(account: string): number | null {
  const match = /^balance:team:(\d+)$/.exec(account);
  return match ? Number(match[1]) : null;
}

/** The level of a subject (`member:3:7` is `member`). */
export function levelOfSubject(subject: string): BudgetLevelName {
  const level = subject.split(':', 1)[0] as BudgetLevelName;
  if (!BUDGET_LEVELS.includes(level)) throw new RangeError(`not a budget subject: ${subject}`);
  return level;
}

/** True when `zone` is an IANA time zone this runtime knows (`UTC`, `Europe/Berlin`). */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

interface WallClock {
  year: number;
  month: number; // 1-12
  day: number;
  weekday: number; // 0 = Monday .. 6 = Sunday
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function wallClock(at: Date, zone: string): WallClock {
  let format = formatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      weekday: 'short',
    });
    formatters.set(zone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(at).map((p) => [p.type, p.value]));
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    weekday: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].indexOf(parts.weekday!),
  };
}

/** The instant a calendar date's midnight happens in `zone` (DST-safe: offsets are read, not assumed). */
function midnightIn(zone: string, year: number, month: number, day: number): Date {
  // Start from UTC midnight of that date and correct by the zone's offset there; a second
  // pass settles the rare day whose offset changes between the two instants.
  let guess = Date.UTC(year, month - 1, day);
  for (let pass = 0; pass < 2; pass += 1) {
    const offset = zoneOffsetMs(new Date(guess), zone);
    guess = Date.UTC(year, month - 1, day) - offset;
  }
  return new Date(guess);
}

const offsetFormatters = new Map<string, Intl.DateTimeFormat>();

/** How far `zone`'s wall clock is ahead of UTC at `at`. */
function zoneOffsetMs(at: Date, zone: string): number {
  let format = offsetFormatters.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    offsetFormatters.set(zone, format);
  }
  // The formatter asks for exactly these parts, so each is there.
  const p = Object.fromEntries(
    format.formatToParts(at).map((x) => [x.type, Number(x.value)]),
  ) as Record<'year' | 'month' | 'day' | 'hour' | 'minute' | 'second', number>;
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return asUtc - Math.floor(at.getTime() / 1000) * 1000;
}

/** The start of the period containing `at`: midnight, Monday's midnight or the 1st's, in `zone`. */
export function periodStart(period: BudgetPeriodName, at: Date, zone = 'UTC'): Date {
  if (period === 'none') return LIFETIME_START;
  const today = wallClock(at, zone);
  if (period === 'day') return midnightIn(zone, today.year, today.month, today.day);
  if (period === 'month') return midnightIn(zone, today.year, today.month, 1);
  // Date.UTC normalises a day before the 1st into the previous month.
  const monday = new Date(Date.UTC(today.year, today.month - 1, today.day - today.weekday));
  return midnightIn(zone, monday.getUTCFullYear(), monday.getUTCMonth() + 1, monday.getUTCDate());
}

/** When the period containing `at` ends and the budget resets; null for `none`. */
export function periodEnd(period: BudgetPeriodName, at: Date, zone = 'UTC'): Date | null {
  if (period === 'none') return null;
  const start = wallClock(periodStart(period, at, zone), zone);
  const next =
    period === 'day'
      ? new Date(Date.UTC(start.year, start.month - 1, start.day + 1))
      : period === 'week'
        ? new Date(Date.UTC(start.year, start.month - 1, start.day + 7))
        : new Date(Date.UTC(start.year, start.month, 1));
  return midnightIn(zone, next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate());
}

export interface BudgetPeriodSpan {
  start: Date;
  /** Null for period `none`, which never ends. */
  end: Date | null;
}

/** The last span computed per period and zone: requests of one period reuse it. */
const spans = new Map<string, BudgetPeriodSpan>();
const LIFETIME: BudgetPeriodSpan = { start: LIFETIME_START, end: null };

/**
 * `periodStart` and `periodEnd` of the period containing `at`, remembered until `at` leaves
 * it: reading a zone's wall clock takes several `Intl` calls, too many for every request
 * on the hot path, and every request of the same period gets the same answer.
 */
export function periodSpan(period: BudgetPeriodName, at: Date, zone = 'UTC'): BudgetPeriodSpan {
  if (period === 'none') return LIFETIME;
  const key = `${period} ${zone}`;
  const known = spans.get(key);
  const time = at.getTime();
  if (known && known.start.getTime() <= time && time < known.end!.getTime()) return known;
  const span = { start: periodStart(period, at, zone), end: periodEnd(period, at, zone) };
  spans.set(key, span);
  return span;
}

/** A cost under a price group: `ceil(cost * multiplier / 1e6)`, so a discount never rounds a paid request to nothing. */
export function applyMultiplier(cost: bigint, multiplier: number): bigint {
  if (multiplier === UNIT_MULTIPLIER) return cost;
  const scaled = cost * BigInt(multiplier);
  return (scaled + BigInt(UNIT_MULTIPLIER) - 1n) / BigInt(UNIT_MULTIPLIER);
}

/** True once the spend reaches the soft threshold (percent of the amount). */
export function softThresholdReached(
  spent: bigint,
  amount: bigint,
  softPercent: number | null,
): boolean {
  return softPercent !== null && spent * 100n >= amount * BigInt(softPercent);
}
