/** The UTC day `at` falls on, as midnight UTC: the key of a user's daily usage. */
export function utcDay(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
}

/** `YYYY-MM-DD` of a UTC day. */
export const dayKey = (day: Date): string => day.toISOString().slice(0, 10);

export const DAY_MS = 86_400_000;

/** The last `days` UTC days, today included, oldest first, as `YYYY-MM-DD`. */
export function period(days: number, now: Date): { first: Date; keys: string[] } {
  const first = new Date(utcDay(now).getTime() - (days - 1) * DAY_MS);
  const keys = Array.from({ length: days }, (_, index) =>
    dayKey(new Date(first.getTime() + index * DAY_MS)),
  );
  return { first, keys };
}
