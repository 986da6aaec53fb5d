const DAY_MS = 86_400_000;

/** Midnight UTC of the day `at` falls in. */
export function startOfUtcDay(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

export function addDays(day: Date, days: number): Date {
  return new Date(day.getTime() + days * DAY_MS);
}

/** `YYYY-MM-DD` of a UTC day. */
export function isoDay(day: Date): string {
  return day.toISOString().slice(0, 10);
}

/** Midnight UTC of the first day of the month `at` falls in, `months` later. */
export function startOfUtcMonth(at: Date, months = 0): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + months, 1));
}
