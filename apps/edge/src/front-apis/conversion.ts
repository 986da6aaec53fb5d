import { GatewayError, type RoutedChannel } from '@switchyard/contracts';
import { redactSecrets } from '@switchyard/observability';
import {
  chatAdapterFor,
  type AnswerContext,
  type ChatAdapter,
  type OutboundRequest,
  type StreamTranslator,
  type TranslatedAnswer,
} from '@switchyard/providers';
import type { JsonSummary } from '../proxy/json-summary.js';
import type { Answer } from '../proxy/upstream-answer.js';
import {
  type ChannelCall,
  type ChannelTarget,
  type ParsedBody,
  type UpstreamRequest,
} from './front-api.js';
import { bodyFor } from './request-body.js';

// The seam between the front APIs and libs/providers: channels of the `openai` provider get
// the client's bytes as sent; every other provider gets a converted request, and its answer
// is converted back before the relay sees it (docs/providers.md). What each front API makes
// of that (Anthropic's and the Responses API convert once more) is in its own folder.

/**
 * The adapter for a channel, or null when the request goes through untouched; a 400 when
 * the channel's provider does not offer the caller's API (`offers` says which do).
 */
export function adapterOf(
  channel: RoutedChannel,
  offers: (adapter: ChatAdapter | null) => boolean = () => true,
): ChatAdapter | null {
  const provider = channel.provider ?? 'openai';
  if (provider === 'openai') return null;
  const adapter = chatAdapterFor(provider);
  if (!offers(adapter)) {
    throw new GatewayError(
      'invalid_request',
      `The model is served here by a ${provider} channel, which does not offer this endpoint.`,
      'model',
    );
  }
  return adapter;
}

/** The client's body as sent (its model renamed) to an OpenAI-compatible upstream's `path`. */
export function passedThrough(
  body: ParsedBody,
  target: ChannelTarget,
  path: string,
): UpstreamRequest {
  return { path, providerPath: false, body: bodyFor(body, target.upstreamModel) };
}

/** A request an adapter converted, on the provider's own path. */
export function converted(request: OutboundRequest): UpstreamRequest {
  return { ...request, providerPath: true };
}

/** The router judges a converted provider by its adapter's reading of status and body. */
export function healthOf(adapter: ChatAdapter | null): ChannelCall['healthStatus'] {
  return adapter && ((status, body) => adapter.healthStatus(status, body));
}

export function answerContext(body: ParsedBody, upstreamModel: string): AnswerContext {
  const options = body.json.stream_options as { include_usage?: unknown } | null | undefined;
  return {
    model: upstreamModel,
    includeUsage: options?.include_usage === true,
    created: Math.floor(Date.now() / 1000),
    base64: body.json.encoding_format === 'base64',
  };
}

/**
 * The provider's answer in OpenAI's format. A whole answer is converted at once (an error
 * body too, and a success by `whole`: a chat completion unless told); a stream is converted
 * as it is relayed, its first chunk now, so that a provider error in the first event still
 * fails over.
 */
export function convertAnswer(
  adapter: ChatAdapter,
  status: number,
  answer: Answer,
  context: AnswerContext,
  whole: (body: Buffer, context: AnswerContext) => Buffer = (body, c) =>
    adapter.chatAnswer(body, c).body,
): Answer {
  if (answer.kind === 'whole') {
    if (status >= 400) return { kind: 'whole', body: adapter.error(status, answer.body).body };
    return { kind: 'whole', body: whole(answer.body, context) };
  }
  return translatedAnswer(answer, adapter.chatStream(context));
}

/** A stream converted by `translator` as it is relayed, its first chunk now. */
export function translatedAnswer(
  answer: Extract<Answer, { kind: 'stream' }>,
  translator: StreamTranslator,
): Answer {
  const first = answer.first ? Buffer.from(translator.push(answer.first)) : null;
  return { kind: 'stream', first, rest: translated(answer.rest, translator), translator };
}

/** A stream passed through as it came, read by `reader` for its usage as it passes. */
export function readAnswer(
  answer: Extract<Answer, { kind: 'stream' }>,
  reader: StreamTranslator,
): Answer {
  if (answer.first) reader.push(answer.first);
  return { ...answer, rest: relayedAsIs(answer.rest, reader), translator: reader };
}

export function summaryOf({ usage, model, completionText }: TranslatedAnswer): JsonSummary {
  return { usage, model, completionText, items: 0 };
}

/**
 * The events that carry an upstream's mid-stream error, which quote its words: without
 * the keys this edge opened (key-vault.ts) or anything credential-shaped
 * (docs/architecture.md, "Secrets in error text"). Only these are searched: the answer's
 * content is the model's, and passes as it came.
 */
function failureEvents(events: Buffer | string): Buffer {
  return Buffer.from(redactSecrets(events.toString()));
}

/** A passed-through stream, byte for byte, read for its usage as it passes. */
async function* relayedAsIs(
  rest: AsyncIterator<Buffer>,
  reader: StreamTranslator,
): AsyncGenerator<Buffer> {
  try {
    for (let next = await rest.next(); !next.done; next = await rest.next()) {
      reader.push(next.value);
      yield reader.failure ? failureEvents(next.value) : next.value;
      if (reader.failure) return;
    }
    const ending = reader.end();
    if (ending !== '') yield Buffer.from(ending);
  } finally {
    await rest.return?.();
  }
}

async function* translated(
  rest: AsyncIterator<Buffer>,
  translator: StreamTranslator,
): AsyncGenerator<Buffer> {
  try {
    for (let next = await rest.next(); !next.done; next = await rest.next()) {
      const events = translator.push(next.value);
      if (events !== '') yield translator.failure ? failureEvents(events) : Buffer.from(events);
      if (translator.failure) return;
    }
    yield Buffer.from(translator.end());
  } finally {
    await rest.return?.();
  }
}
