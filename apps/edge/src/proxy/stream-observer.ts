import type { ChatCompletionChunk, ReportedUsage } from '@switchyard/contracts';

// Watches a relayed event stream without slowing it: chunks are only kept; they are read
// once the stream is over, for the usage the upstream reported (or the text to count when
// it reported none) and the model name it answered with.

const KEEP_LIMIT_BYTES = 8 * 1024 * 1024;

export interface StreamSummary {
  usage: ReportedUsage | null;
  model: string | null;
  completionText: string;
}

export class StreamObserver {
  private readonly chunks: Buffer[] = [];
  private kept = 0;

  see(chunk: Buffer): void {
    if (this.kept >= KEEP_LIMIT_BYTES) return;
    this.chunks.push(chunk);
    this.kept += chunk.length;
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

export function summarizeJson(body: Buffer): JsonSummary {
  try {
    const json = JSON.parse(body.toString('utf8')) as {
      model?: unknown;
      usage?: {
        prompt_tokens?: number;
        completion_tokens?: number;
        input_tokens?: number;
        output_tokens?: number;
        prompt_tokens_details?: { cached_tokens?: number };
      };
      choices?: { message?: { content?: unknown } }[];
      data?: unknown[];
    };
    const reported = json.usage;
    const prompt = reported?.prompt_tokens ?? reported?.input_tokens;
    const usage =
      typeof prompt === 'number'
        ? {
            promptTokens: prompt,
            completionTokens: reported?.completion_tokens ?? reported?.output_tokens ?? 0,
            ...cachedOf(reported),
          }
        : null;
    const completionText = (json.choices ?? [])
      .map((c) => (typeof c.message?.content === 'string' ? c.message.content : ''))
      .join('');
    return {
      usage,
      model: typeof json.model === 'string' ? json.model : null,
      completionText,
      items: Array.isArray(json.data) ? json.data.length : 0,
    };
  } catch {
    return { usage: null, model: null, completionText: '', items: 0 };
  }
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
