// A plan's periods (docs/credits.md, "Plans"): UTC days or UTC calendar months, so every
// chat process and the specs agree on the boundaries whatever their time zone.

export type PlanPeriod = 'day' | 'month';

/** The start of the period that contains `at`. */
export function periodStart(period: PlanPeriod, at: Date): Date {
  return period === 'day'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/** The start of the period after the one that starts at `start`. */
export function nextPeriod(period: PlanPeriod, start: Date): Date {
  return period === 'day'
    ? new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + 1))
    : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
}

/** The period in the ledger's words: `2026-02` for a month, `2026-02-01` for a day. */
export function periodLabel(period: PlanPeriod, start: Date): string {
  const iso = start.toISOString();
  return period === 'day' ? iso.slice(0, 10) : iso.slice(0, 7);
}
