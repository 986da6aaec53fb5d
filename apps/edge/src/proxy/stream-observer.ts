import type { ChatCompletionChunk, ReportedUsage } from '@switchyard/contracts';

// Watches a relayed event stream without slowing it: chunks are only kept; they are read
// once the stream is over, for the usage the upstream reported (or the text to count when
// it reported none) and the model name it answered with.

const KEEP_LIMIT_BYTES = 8 * 1024 * 1024;
/** Enough of a stream's end to find its `data: [DONE]` event in. */
const TAIL_BYTES = 32;
const DONE_AT_END = /data: ?\[DONE\]\s*$/;

export interface StreamSummary {
  usage: ReportedUsage | null;
  model: string | null;
  completionText: string;
}

export class StreamObserver {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private tail = '';

  see(chunk: Buffer): void {
    this.tail = (this.tail + chunk.toString('latin1')).slice(-TAIL_BYTES);
    if (this.kept >= KEEP_LIMIT_BYTES) return;
    this.chunks.push(chunk);
    this.kept += chunk.length;
  }

  /** Whether the stream so far ends with OpenAI's last event; one that stops before it was cut. */
  get ended(): boolean {
    return DONE_AT_END.test(this.tail);
  }

  summary(): StreamSummary {
    return summarizeEvents(Buffer.concat(this.chunks).toString('utf8'));
  }
}

export function summarizeEvents(text: string): StreamSummary {
  let usage: ReportedUsage | null = null;
  let model: string | null = null;
  let completionText = '';
  for (const line of text.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (data === '' || data === '[DONE]') continue;
    let chunk: Partial<ChatCompletionChunk>;
    try {
      chunk = JSON.parse(data) as Partial<ChatCompletionChunk>;
    } catch {
      continue;
    }
    if (!model && typeof chunk.model === 'string') model = chunk.model;
    if (chunk.usage && typeof chunk.usage.prompt_tokens === 'number') {
      usage = {
        promptTokens: chunk.usage.prompt_tokens,
        completionTokens: chunk.usage.completion_tokens ?? 0,
        ...cachedOf(chunk.usage),
      };
    }
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta ?? {};
      if (typeof delta.content === 'string') completionText += delta.content;
      for (const call of delta.tool_calls ?? [])
        completionText += (call.function?.name ?? '') + (call.function?.arguments ?? '');
      if (delta.function_call)
        completionText += (delta.function_call.name ?? '') + (delta.function_call.arguments ?? '');
    }
  }
  return { usage, model, completionText };
}

/** Usage and model from a whole JSON response of any endpoint. */
export interface JsonSummary {
  usage: ReportedUsage | null;
  model: string | null;
  completionText: string;
  /** Items in `data` (images of an image generation; embeddings otherwise). */
  items: number;
}

/** Null when the body is not a JSON object: no answer at all. */
export function summarizeJson(body: Buffer): JsonSummary | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const json = parsed as {
    model?: unknown;
    usage?: {
      prompt_tokens?: number;
      completion_tokens?: number;
      input_tokens?: number;
      output_tokens?: number;
      prompt_tokens_details?: { cached_tokens?: number };
    };
    choices?: unknown;
    data?: unknown;
  };
  const reported = typeof json.usage === 'object' && json.usage !== null ? json.usage : undefined;
  const prompt = reported?.prompt_tokens ?? reported?.input_tokens;
  const usage =
    typeof prompt === 'number'
      ? {
          promptTokens: prompt,
          completionTokens: reported?.completion_tokens ?? reported?.output_tokens ?? 0,
          ...cachedOf(reported),
        }
      : null;
  const choices = Array.isArray(json.choices)
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

/** OpenAI reports the input read from its prompt cache inside `prompt_tokens`, and apart. */
function cachedOf(
  usage: { prompt_tokens_details?: { cached_tokens?: number } | null } | undefined,
): {
  cachedTokens?: number;
} {
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  return typeof cached === 'number' && cached > 0 ? { cachedTokens: cached } : {};
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
