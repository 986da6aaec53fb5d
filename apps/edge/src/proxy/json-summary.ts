import type { ReportedUsage } from '@switchyard/contracts';

// What metering needs of a whole JSON answer: the usage the upstream reported, the model it
// answered with, and (only when no usage came) the text to count. An answer that ends with
// its usage, as OpenAI's and Anthropic's do, is read at its two ends only, as a stream is
// (stream-observer.ts): the rest is neither decoded nor parsed, so the cost is the same for
// an answer of ten kilobytes as for one of a few hundred bytes (docs/performance.md, "An
// answer's usage read at its ends").

/** Usage and model from a whole JSON response of any endpoint. */
export interface JsonSummary {
  usage: ReportedUsage | null;
  model: string | null;
  /** What the model wrote, for metering to count; read only when no usage came. */
  completionText: string;
  /** Items in `data` (images of an image generation); counted only when asked for. */
  items: number;
}

interface UsageFields {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  input_tokens?: unknown;
  output_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

/**
 * Null when the body is not a JSON object: no answer at all. With `countItems` (an API whose
 * answers are metered by their items, images), the answer is read whole: its `data` may be
 * anywhere in it.
 */
export function summarizeJson(
  body: Buffer,
  { countItems }: { countItems: boolean } = { countItems: false },
): JsonSummary | null {
  return (countItems ? null : summaryAtEnds(body)) ?? summaryOfWhole(body);
}

/** OpenAI reports the input read from its prompt cache inside `prompt_tokens`, and apart. */
export function cachedOf(
  usage: { prompt_tokens_details?: { cached_tokens?: number } | null } | undefined,
): {
  cachedTokens?: number;
} {
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  return typeof cached === 'number' && cached > 0 ? { cachedTokens: cached } : {};
}

/** The usage of a `usage` object in OpenAI's or Anthropic's words; null without input tokens. */
function reportedUsage(value: unknown): ReportedUsage | null {
  if (typeof value !== 'object' || value === null) return null;
  const usage = value as UsageFields;
  const prompt = usage.prompt_tokens ?? usage.input_tokens;
  if (typeof prompt !== 'number') return null;
  const completion = usage.completion_tokens ?? usage.output_tokens;
  return {
    promptTokens: prompt,
    completionTokens: typeof completion === 'number' ? completion : 0,
    ...cachedOf(usage),
  };
}

function summaryOfWhole(body: Buffer): JsonSummary | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const json = parsed as { model?: unknown; usage?: unknown; choices?: unknown; data?: unknown };
  const usage = reportedUsage(json.usage);
  const choices =
    !usage && Array.isArray(json.choices)
      ? (json.choices as ({ message?: { content?: unknown } } | null)[])
      : [];
  const completionText = choices
    .map((c) => (typeof c?.message?.content === 'string' ? c.message.content : ''))
    .join('');
  return {
    usage,
    model: typeof json.model === 'string' ? json.model : null,
    completionText,
    items: Array.isArray(json.data) ? json.data.length : 0,
  };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const USAGE_KEY = Buffer.from('"usage"');
const MODEL_KEY = Buffer.from('"model"');
/** Bytes a usage object, and what follows it, may take: a few hundred at most in practice. */
const END_BYTES = 4096;
/** How far into an answer its model is looked for: OpenAI and Anthropic name it early. */
const MODEL_WITHIN_BYTES = 1024;

/**
 * The summary of an answer whose top-level object ends with `"usage": {…}` and perhaps a
 * few more members, read from its ends only; null when it is not so (or its usage has no
 * input tokens, when the text is counted instead), and the whole answer is read.
 *
 * The `"usage"` found last is a key of the top-level object when what follows its value
 * closes exactly one object, at the body's last byte. It cannot be inside a string: a key's
 * opening quote follows `{` or `,`, and inside a string that quote would end the string.
 */
function summaryAtEnds(body: Buffer): JsonSummary | null {
  const first = nextNonSpace(body, 0);
  const last = previousNonSpace(body, body.length - 1);
  if (first < 0 || body[first] !== OPEN_OBJECT || body[last] !== CLOSE_OBJECT) return null;
  const key = body.lastIndexOf(USAGE_KEY);
  if (key < last - END_BYTES || !isKeyAt(body, key)) return null;
  const open = valueAfter(body, key + USAGE_KEY.length);
  if (open < 0 || body[open] !== OPEN_OBJECT) return null;
  const close = closingOf(body, open + 1, last + 1);
  if (close < 0 || closingOf(body, close + 1, last + 1) !== last) return null;
  let usage: ReportedUsage | null;
  try {
    usage = reportedUsage(JSON.parse(body.toString('utf8', open, close + 1)));
  } catch {
    return null;
  }
  const model = modelNear(body, first);
  if (!usage || model === undefined) return null;
  return { usage, model, completionText: '', items: 0 };
}

/**
 * The top-level `model` named in the answer's first bytes: null when the answer names none
 * anywhere, undefined when that cannot be told without reading it whole.
 */
function modelNear(body: Buffer, first: number): string | null | undefined {
  const key = body.indexOf(MODEL_KEY, first);
  if (key < 0) return null;
  if (key > MODEL_WITHIN_BYTES || !isKeyAt(body, key) || !atSameLevel(body, first + 1, key))
    return undefined;
  const value = valueAfter(body, key + MODEL_KEY.length);
  if (value < 0) return undefined;
  if (body[value] !== QUOTE) return null;
  const end = stringEnd(body, value, body.length);
  if (end < 0) return undefined;
  // A name without escapes (every model's) is its bytes; one with escapes is decoded.
  if (!body.subarray(value + 1, end).includes(BACKSLASH))
    return body.toString('utf8', value + 1, end);
  try {
    return JSON.parse(body.toString('utf8', value, end + 1)) as string;
  } catch {
    return undefined;
  }
}

/** Whether the quote at `at` opens a key: the byte before it (past spaces) is `{` or `,`. */
function isKeyAt(body: Buffer, at: number): boolean {
  if (at <= 0) return false;
  const before = body[previousNonSpace(body, at - 1)];
  return before === OPEN_OBJECT || before === COMMA;
}

/** Where the value after the key ending at `from` starts (past `:`); -1 if no `:` follows. */
function valueAfter(body: Buffer, from: number): number {
  const colon = nextNonSpace(body, from);
  if (colon < 0 || body[colon] !== COLON) return -1;
  return nextNonSpace(body, colon + 1);
}

/**
 * Where the object or array that `from` is inside closes (the index of its `}` or `]`),
 * past strings and nested values; -1 when it does not close before `end`.
 */
function closingOf(body: Buffer, from: number, end: number): number {
  let depth = 0;
  for (let i = from; i < end; i++) {
    const byte = body[i];
    if (byte === QUOTE) {
      i = stringEnd(body, i, end);
      if (i < 0) return -1;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      depth++;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** Whether `to` is at the level of `from`: outside every string and value begun since. */
function atSameLevel(body: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const byte = body[i];
    if (byte === QUOTE) i = stringEnd(body, i, to);
    else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) i = closingOf(body, i + 1, to);
    else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) return false;
    if (i < 0) return false;
  }
  return true;
}

/** The index of the quote closing the string opened at `open`; -1 when not before `end`. */
function stringEnd(body: Buffer, open: number, end: number): number {
  for (let i = open + 1; i < end; i++) {
    const byte = body[i];
    if (byte === BACKSLASH) i++;
    else if (byte === QUOTE) return i;
  }
  return -1;
}

function isSpace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function nextNonSpace(body: Buffer, from: number): number {
  let i = from;
  while (i < body.length && isSpace(body[i])) i++;
  return i < body.length ? i : -1;
}

function previousNonSpace(body: Buffer, from: number): number {
  let i = from;
  while (i >= 0 && isSpace(body[i])) i--;
  return i;
}
