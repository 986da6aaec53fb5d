import { MAX_MODEL_LENGTH } from '@switchyard/domain';
import { type UsageRecord } from './queues.js';

// Postgres refuses NUL (U+0000) in text, and a lone surrogate has no UTF-8 form, so a
// usage record carrying either fails its insert on every attempt and ends dead-lettered:
// a request served but never billed. Whatever a client or an upstream sent, the record is
// made storable before it is queued (docs/reliability.md, "Defects of the edges of the
// services").

/** The character that takes the place of one that cannot be stored. */
export const REPLACEMENT_CHARACTER = '\uFFFD';

// ES2024's String methods, native and one pass each; the compiled library targets ES2023.
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** `text` with NUL and lone surrogates replaced by U+FFFD; the same string when it has none. */
export function storableText(text: string): string {
  const wellFormed = (text as unknown as WellFormedString).isWellFormed();
  if (wellFormed && !text.includes('\u0000')) return text;
  const whole = wellFormed ? text : (text as unknown as WellFormedString).toWellFormed();
  return whole.replaceAll('\u0000', REPLACEMENT_CHARACTER);
}

/**
 * The first `max` UTF-16 units of a storable `text`, one fewer when the cut would split a
 * surrogate pair (which would leave a lone surrogate behind).
 */
export function storablePrefix(text: string, max: number): string {
  const clean = storableText(text);
  if (clean.length <= max) return clean;
  const last = clean.charCodeAt(max - 1);
  return clean.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

function optionalText(value: string | null | undefined): string | null | undefined {
  return typeof value === 'string' ? storableText(value) : value;
}

/**
 * The one sanitising step of a usage record: every text field storable, the model names
 * within their length. Numbers and flags pass as they are.
 */
export function storableUsageRecord(record: UsageRecord): UsageRecord {
  const storable: UsageRecord = {
    ...record,
    requestId: storableText(record.requestId),
    model: storablePrefix(record.model, MAX_MODEL_LENGTH),
    upstreamModel:
      typeof record.upstreamModel === 'string'
        ? storablePrefix(record.upstreamModel, MAX_MODEL_LENGTH)
        : record.upstreamModel,
    errorCode: optionalText(record.errorCode) ?? null,
    clientIp: optionalText(record.clientIp) ?? null,
  };
  if (record.requestedModel !== undefined) {
    storable.requestedModel = storablePrefix(record.requestedModel, MAX_MODEL_LENGTH);
  }
  if (record.promptText !== undefined) storable.promptText = storableText(record.promptText);
  if (record.completionText !== undefined) {
    storable.completionText = storableText(record.completionText);
  }
  return storable;
}
