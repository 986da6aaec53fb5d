import { GatewayError, type GatewayEndpoint, type RoutedChannel } from '@switchyard/contracts';
import {
  chatAdapterFor,
  type AnswerContext,
  type ChatAdapter,
  type ChatRequestInput,
  type OutboundRequest,
  type StreamTranslator,
} from '@switchyard/providers';
import type { ParsedBody } from './request-body.js';
import type { Answer } from './upstream-answer.js';

// The seam between the forward step and libs/providers: channels of the `openai` provider
// get the client's bytes as sent; every other provider gets a converted request, and its
// answer is converted back before the relay sees it (docs/providers.md).

/** The adapter for a channel, or null when the request goes through untouched. */
export function adapterFor(endpoint: GatewayEndpoint, channel: RoutedChannel): ChatAdapter | null {
  const provider = channel.provider ?? 'openai';
  if (provider === 'openai') return null;
  const adapter = chatAdapterFor(provider);
  const offered =
    endpoint === 'chat.completions' || (endpoint === 'embeddings' && adapter?.embeddings);
  if (!offered) {
    throw new GatewayError(
      'invalid_request',
      `The model is served here by a ${provider} channel, which does not offer this endpoint.`,
      'model',
    );
  }
  return adapter;
}

/** The request in the provider's format, for the endpoint the client called. */
export function convertRequest(
  adapter: ChatAdapter,
  endpoint: GatewayEndpoint,
  input: ChatRequestInput,
  stream: boolean,
): OutboundRequest {
  return endpoint === 'embeddings'
    ? adapter.embeddings!.request(input)
    : adapter.chatRequest(input, stream);
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
 * body too); a stream is converted as it is relayed, its first chunk now, so that a
 * provider error in the first event still fails over.
 */
export function convertAnswer(
  adapter: ChatAdapter,
  endpoint: GatewayEndpoint,
  status: number,
  answer: Answer,
  context: AnswerContext,
): Answer {
  if (answer.kind === 'whole') {
    if (status >= 400) return { kind: 'whole', body: adapter.error(status, answer.body).body };
    return {
      kind: 'whole',
      body:
        endpoint === 'embeddings'
          ? adapter.embeddings!.answer(answer.body, context)
          : adapter.chatAnswer(answer.body, context).body,
    };
  }
  const translator = adapter.chatStream(context);
  const first = answer.first ? Buffer.from(translator.push(answer.first)) : null;
  return { kind: 'stream', first, rest: translated(answer.rest, translator), translator };
}

async function* translated(
  rest: AsyncIterator<Buffer>,
  translator: StreamTranslator,
): AsyncGenerator<Buffer> {
  try {
    for (let next = await rest.next(); !next.done; next = await rest.next()) {
      const events = translator.push(next.value);
      if (events !== '') yield Buffer.from(events);
      if (translator.failure) return;
    }
    yield Buffer.from(translator.end());
  } finally {
    await rest.return?.();
  }
}
