import type { ReportedUsage } from '@switchyard/contracts';
import type {
  AnswerContext,
  StreamTranslator,
  TranslatedAnswer,
  TranslatedError,
} from '../adapter.js';
import { ChatChunkDecoder, DONE_EVENT, errorEvent } from '../sse.js';

// Azure OpenAI answers in OpenAI's own format, with content-filter annotations added
// (https://learn.microsoft.com/azure/ai-foundry/openai/concepts/content-filter). The JSON
// answer goes to the client as sent; streams lose only what OpenAI clients trip over.

interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

interface Completion {
  model?: string;
  choices?: {
    message?: { content?: string | null; tool_calls?: { function?: unknown }[] };
    delta?: unknown;
  }[];
  usage?: OpenAIUsage | null;
  error?: { code?: string; message?: string };
}

function usageOf(usage: OpenAIUsage): ReportedUsage {
  return {
    promptTokens: usage.prompt_tokens ?? 0,
    completionTokens: usage.completion_tokens ?? 0,
    cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
  };
}

export function azureAnswer(body: Buffer, context: AnswerContext): TranslatedAnswer {
  const completion = JSON.parse(body.toString('utf8')) as Completion;
  const message = completion.choices?.[0]?.message;
  const completionText =
    (message?.content ?? '') +
    (message?.tool_calls ?? []).map((call) => JSON.stringify(call.function)).join('');
  return {
    body,
    usage: completion.usage ? usageOf(completion.usage) : null,
    model: completion.model ?? context.model,
    completionText,
  };
}

/**
 * Relays Azure's OpenAI chunks. Dropped: the chunk that only announces the prompt's filter
 * results (its `choices` is empty, and clients reading `choices[0]` break on it), and the
 * usage chunk the gateway asked for when the client did not.
 */
export class AzureStreamTranslator implements StreamTranslator {
  private readonly chunks = new ChatChunkDecoder<Completion>({
    finished: () => Boolean(this.failure || this.done),
    chunk: (chunk) => this.translate(chunk),
    done: () => {
      this.done = true;
      return DONE_EVENT;
    },
  });
  private done = false;
  usage: ReportedUsage | null = null;
  failure: string | null = null;

  constructor(private readonly context: AnswerContext) {}

  push(chunk: Buffer): string {
    return this.chunks.push(chunk);
  }

  private translate(parsed: Completion): string {
    if (parsed.error) {
      this.failure = `${parsed.error.code ?? 'error'}: ${parsed.error.message ?? 'the upstream reported an error'}`;
      return errorEvent(
        `The upstream stream was interrupted: ${this.failure}`,
        'stream_interrupted',
      );
    }
    if (parsed.usage) this.usage = usageOf(parsed.usage);
    const announcesOnly = (parsed.choices ?? []).length === 0;
    if (announcesOnly && !(parsed.usage && this.context.includeUsage)) return '';
    if (!this.context.includeUsage && 'usage' in parsed) delete parsed.usage;
    return `data: ${JSON.stringify(parsed)}\n\n`;
  }

  end(): string {
    if (this.failure || this.done) return '';
    this.failure = 'the upstream stream ended before its [DONE] event';
    return errorEvent(`The upstream stream was interrupted: ${this.failure}`, 'stream_interrupted');
  }
}

const ERRORS_BY_STATUS: Record<number, { type: string; code: string }> = {
  400: { type: 'invalid_request_error', code: 'invalid_request' },
  401: { type: 'authentication_error', code: 'invalid_api_key' },
  403: { type: 'permission_error', code: 'permission_denied' },
  404: { type: 'invalid_request_error', code: 'deployment_not_found' },
  429: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
};

/**
 * Azure's `{error: {code, message, param?}}` in OpenAI's shape: named codes
 * (`content_filter`, `DeploymentNotFound`) are kept, numeric ones ("401") say what they mean.
 */
export function azureError(status: number, body: Buffer): TranslatedError {
  const fallback = ERRORS_BY_STATUS[status] ?? { type: 'server_error', code: 'server_error' };
  let message = `The upstream answered ${status}.`;
  let code = fallback.code;
  let param: string | null = null;
  try {
    const parsed = JSON.parse(body.toString('utf8')) as {
      error?: { code?: unknown; message?: unknown; param?: unknown };
      message?: unknown;
    };
    const error = parsed.error;
    if (typeof error?.message === 'string') message = error.message;
    else if (typeof parsed.message === 'string') message = parsed.message;
    if (typeof error?.code === 'string' && !/^\d+$/.test(error.code)) code = error.code;
    if (typeof error?.param === 'string') param = error.param;
  } catch {
    // Not JSON (a proxy's HTML page): keep the status-based message.
  }
  return {
    body: Buffer.from(JSON.stringify({ error: { message, type: fallback.type, param, code } })),
    message,
  };
}
