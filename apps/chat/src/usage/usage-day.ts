/** The UTC day `at` falls on, as midnight UTC: the key of a user's daily usage. */
export function utcDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

/** `YYYY-MM-DD` of a UTC day. */
export const dayKey = (day: Date): string => day.toISOString().slice(0, 10);

export const DAY_MS = 86_400_000;
