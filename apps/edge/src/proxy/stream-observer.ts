import type { ChatCompletionChunk, ReportedUsage } from '@switchyard/contracts';
import { cachedOf } from './json-summary.js';

// Watches a relayed event stream without slowing it: chunks are only kept; they are read
// once the stream is over, for the usage the upstream reported (or the text to count when
// it reported none) and the model name it answered with.

const KEEP_LIMIT_BYTES = 8 * 1024 * 1024;
/**
 * How much of a stream's start and end is kept apart: the first event names the model, the
 * last reports the usage (OpenAI's `include_usage` chunk) and `[DONE]` ends it.
 */
const END_BYTES = 16 * 1024;
const DONE_AT_END = /data: ?\[DONE\]\s*$/;
/** Bytes of the end the last event is looked for in first: a usage event is a few hundred. */
const LAST_EVENT_BYTES = 1024;
/** Bytes of the end read to tell whether it is `[DONE]`, unless they are all whitespace. */
const DONE_TAIL_BYTES = 64;
/** `data: [DONE]`, the longest way the last event is written. */
const DONE_EVENT_LENGTH = 12;
const NEWLINE = 0x0a;

export interface StreamSummary {
  usage: ReportedUsage | null;
  model: string | null;
  /** What the model wrote, for metering to count; collected only when no usage came. */
  completionText: string;
}

export class StreamObserver {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  /** The latest chunks, at least END_BYTES of them while the stream is that long. */
  private readonly recent: Buffer[] = [];
  private recentBytes = 0;

  see(chunk: Buffer): void {
    this.recent.push(chunk);
    this.recentBytes += chunk.length;
    while (this.recentBytes - this.recent[0]!.length >= END_BYTES)
      this.recentBytes -= this.recent.shift()!.length;
    if (this.kept >= KEEP_LIMIT_BYTES) return;
    this.chunks.push(chunk);
    this.kept += chunk.length;
  }

  /** Whether the stream so far ends with OpenAI's last event; one that stops before it was cut. */
  get ended(): boolean {
    let tail = this.end(DONE_TAIL_BYTES).toString('latin1');
    if (tail.trimEnd().length < DONE_EVENT_LENGTH) tail = this.end().toString('latin1');
    return DONE_AT_END.test(tail);
  }

  /**
   * When the last event reports usage, only the stream's two ends are read (its end alone
   * when that event names the model too): the events between are neither decoded nor
   * parsed, which for an answer of a few hundred events is most of the work; of the ends,
   * only the lines parsed are decoded. Without usage every event is read for the text
   * metering counts.
   */
  summary(): StreamSummary {
    const last = lastChunk(this.end(LAST_EVENT_BYTES)) ?? lastChunk(this.end());
    const usage = usageOf(last);
    if (usage) {
      // OpenAI's usage event names the model as every event does: the first is read only
      // when it does not.
      const first = this.chunks[0];
      const model =
        modelOf(last) ??
        (first && firstModel(first, this.chunks.length === 1)) ??
        firstModel(Buffer.concat(this.chunks, Math.min(this.kept, END_BYTES)), true);
      return { usage, model, completionText: '' };
    }
    return summarizeEvents(Buffer.concat(this.chunks).toString('utf8'));
  }

  /** The stream's last `bytes`, copied from as few of the latest chunks as hold them. */
  private end(bytes = END_BYTES): Buffer {
    let first = this.recent.length;
    let held = 0;
    while (first > 0 && held < bytes) held += this.recent[--first]!.length;
    const latest = first === this.recent.length - 1 ? this.recent[first]! : null;
    return (latest ?? Buffer.concat(this.recent.slice(first), held)).subarray(-bytes);
  }
}

/** Usage, model and (without usage) the text of a whole event stream. */
export function summarizeEvents(text: string): StreamSummary {
  let model: string | null = null;
  let completionText = '';
  let reported: ReportedUsage | null = null;
  for (const line of text.split('\n')) {
    const chunk = chunkOf(line);
    if (!chunk) continue;
    model ??= modelOf(chunk);
    reported = usageOf(chunk) ?? reported;
    // What an upstream sends is not trusted to have OpenAI's shape: anything else is skipped.
    for (const choice of listOf(chunk.choices)) {
      const delta = choice?.delta ?? {};
      if (typeof delta.content === 'string') completionText += delta.content;
      for (const call of listOf(delta.tool_calls))
        completionText += textOf(call?.function?.name) + textOf(call?.function?.arguments);
      if (delta.function_call)
        completionText += textOf(delta.function_call.name) + textOf(delta.function_call.arguments);
    }
  }
  return { usage: reported, model, completionText: reported ? '' : completionText };
}

/** The last chunk of the events in `bytes`, read from their end. */
function lastChunk(bytes: Buffer): Partial<ChatCompletionChunk> | null {
  let end = bytes.length;
  while (end > 0) {
    const start = bytes.lastIndexOf(NEWLINE, end - 1) + 1;
    const chunk = chunkAt(bytes, start, end);
    if (chunk) return chunk;
    end = start - 1;
  }
  return null;
}

/**
 * The model the first of the events in `bytes` that names one names; a last line with no
 * newline after it is read only when `whole` (else it may go on in the next chunk).
 */
function firstModel(bytes: Buffer, whole: boolean): string | null {
  let start = 0;
  while (start < bytes.length) {
    const newline = bytes.indexOf(NEWLINE, start);
    if (newline < 0 && !whole) return null;
    const end = newline < 0 ? bytes.length : newline;
    const model = modelOf(chunkAt(bytes, start, end));
    if (model || newline < 0) return model;
    start = end + 1;
  }
  return null;
}

const DATA = Buffer.from('data:');

/** The chunk of the line between `start` and `end`, decoded only when it is a `data:` line. */
function chunkAt(bytes: Buffer, start: number, end: number): Partial<ChatCompletionChunk> | null {
  if (
    end - start <= DATA.length ||
    bytes.compare(DATA, 0, DATA.length, start, start + DATA.length) !== 0
  )
    return null;
  return chunkOf(bytes.toString('utf8', start, end));
}

/** The chunk a `data:` line carries; null for `[DONE]`, any other line or what is not JSON. */
function chunkOf(line: string): Partial<ChatCompletionChunk> | null {
  if (!line.startsWith('data:')) return null;
  const data = line.slice(5).trim();
  if (data === '' || data === '[DONE]') return null;
  try {
    const chunk = JSON.parse(data) as unknown;
    return typeof chunk === 'object' && chunk !== null ? chunk : null;
  } catch {
    return null;
  }
}

function listOf<T>(value: T[] | null | undefined): (T | null)[] {
  return Array.isArray(value) ? value : [];
}

function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function modelOf(chunk: Partial<ChatCompletionChunk> | null): string | null {
  return typeof chunk?.model === 'string' ? chunk.model : null;
}

function usageOf(chunk: Partial<ChatCompletionChunk> | null): ReportedUsage | null {
  const usage = chunk?.usage;
  if (!usage || typeof usage.prompt_tokens !== 'number') return null;
  return {
    promptTokens: usage.prompt_tokens,
    completionTokens: typeof usage.completion_tokens === 'number' ? usage.completion_tokens : 0,
    ...cachedOf(usage),
  };
}

/**
 * Lets only whole server-sent events through: a stream cut mid-event then ends with the
 * relay's interruption event, not with half an event the SDKs fail to parse.
 */
export class WholeEvents {
  private partial: Buffer | null = null;

  /** The whole events `chunk` completes (null when none), keeping the rest back. */
  take(chunk: Buffer): Buffer | null {
    const bytes = this.partial ? Buffer.concat([this.partial, chunk]) : chunk;
    const end = Math.max(bytes.lastIndexOf('\n\n'), bytes.lastIndexOf('\n\r\n'));
    if (end < 0) {
      this.partial = bytes;
      return null;
    }
    const cut = bytes[end + 1] === 0x0d ? end + 3 : end + 2;
    this.partial = cut < bytes.length ? bytes.subarray(cut) : null;
    return bytes.subarray(0, cut);
  }

  /** What was kept back: an event the stream never finished. */
  get rest(): Buffer | null {
    return this.partial;
  }
}
