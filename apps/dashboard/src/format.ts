// How numbers, money and times read on the dashboard.

const MICROS_PER_DOLLAR = 1_000_000;

/** Micro-dollars (the API's unit) as dollars. */
export function money(micros: number | null | undefined): string {
  if (micros === null || micros === undefined) return '—';
  const dollars = micros / MICROS_PER_DOLLAR;
  return `$${dollars.toLocaleString('en-US', {
    minimumFractionDigits: 2,
    maximumFractionDigits: dollars !== 0 && Math.abs(dollars) < 1 ? 6 : 2,
  })}`;
}

export function dollarsToMicros(text: string): number | null {
  const value = Number(text);
  return text.trim() === '' || !Number.isFinite(value)
    ? null
    : Math.round(value * MICROS_PER_DOLLAR);
}

export function microsToDollars(micros: number): string {
  return String(micros / MICROS_PER_DOLLAR);
}

export function count(value: number): string {
  return value.toLocaleString('en-US');
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString('en-GB', {
    dateStyle: 'medium',
    timeStyle: 'medium',
  });
}

/** "in 42 s", "in 3 min" until a time in the future. */
export function timeLeft(iso: string, now: number = Date.now()): string {
  const seconds = Math.max(0, Math.round((Date.parse(iso) - now) / 1000));
  return seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
}

/** A list typed one per line or comma-separated. */
export function listOf(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

export function toNumberOrNull(text: string): number | null {
  if (text.trim() === '') return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

/** Downloads text as a file, from the browser. */
export function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
