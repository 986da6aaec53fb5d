import { GatewayError, type GatewayEndpoint, type RoutedChannel } from '@switchyard/contracts';
import {
  chatAdapterFor,
  type AnswerContext,
  type ChatAdapter,
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
  if (endpoint !== 'chat.completions') {
    throw new GatewayError(
      'invalid_request',
      `The model is served here by a ${provider} channel, which does not offer this endpoint.`,
      'model',
    );
  }
  return chatAdapterFor(provider);
}

export function answerContext(body: ParsedBody, upstreamModel: string): AnswerContext {
  const options = body.json.stream_options as { include_usage?: unknown } | null | undefined;
  return {
    model: upstreamModel,
    includeUsage: options?.include_usage === true,
    created: Math.floor(Date.now() / 1000),
  };
}

/**
 * The provider's answer in OpenAI's format. A whole answer is converted at once (an error
 * body too); a stream is converted as it is relayed, its first chunk now, so that a
 * provider error in the first event still fails over.
 */
export function convertAnswer(
  adapter: ChatAdapter,
  status: number,
  answer: Answer,
  context: AnswerContext,
): Answer {
  if (answer.kind === 'whole') {
    return {
      kind: 'whole',
      body:
        status < 400
          ? adapter.chatAnswer(answer.body, context).body
          : adapter.error(status, answer.body).body,
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
