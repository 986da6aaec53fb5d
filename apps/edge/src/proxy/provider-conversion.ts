import { GatewayError, type GatewayEndpoint, type RoutedChannel } from '@switchyard/contracts';
import { redactSecrets } from '@switchyard/observability';
import {
  AnthropicStreamReader,
  ChatToMessagesStream,
  ChatToResponsesStream,
  ResponsesStreamReader,
  anthropicHeaders,
  chatAdapterFor,
  chatAnswerToMessage,
  chatAnswerToResponse,
  chatErrorToMessagesError,
  messagesPassthroughUsage,
  messagesToChatRequest,
  responseEcho,
  responsesPassthroughUsage,
  responsesToChatRequest,
  type AnswerContext,
  type ChatAdapter,
  type ChatRequestInput,
  type OutboundRequest,
  type StreamTranslator,
  type TranslatedAnswer,
} from '@switchyard/providers';
import { bodyFor, type ParsedBody } from './request-body.js';
import type { JsonSummary } from './stream-observer.js';
import type { Answer } from './upstream-answer.js';

// The seam between the forward step and libs/providers: channels of the `openai` provider
// get the client's bytes as sent; every other provider gets a converted request, and its
// answer is converted back before the relay sees it (docs/providers.md). On /v1/messages
// (Anthropic's API in front) it is the other way round: `anthropic` channels get the bytes
// as sent, every other channel an OpenAI chat completion, converted again by its adapter.
// /v1/responses (OpenAI's Responses API in front) goes to `openai` channels as sent and to
// every other one as a chat completion the same way.

/** The adapter for a channel, or null when the request goes through untouched. */
export function adapterFor(endpoint: GatewayEndpoint, channel: RoutedChannel): ChatAdapter | null {
  const provider = channel.provider ?? 'openai';
  if (provider === 'openai') return null;
  const adapter = chatAdapterFor(provider);
  const offered =
    endpoint === 'chat.completions' ||
    endpoint === 'messages' ||
    endpoint === 'messages.count_tokens' ||
    endpoint === 'responses' ||
    (endpoint === 'embeddings' && adapter?.embeddings);
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

export interface MessagesRequestInput extends Omit<ChatRequestInput, 'body'> {
  body: ParsedBody;
  /** The client's `anthropic-beta` header: the features it opted into, for anthropic channels. */
  beta?: string | string[];
}

/**
 * A /v1/messages request for one channel: an anthropic channel gets the client's body (its
 * model renamed); any other gets it as an OpenAI chat completion (a 400 for what has none),
 * in the provider's format when the channel has an adapter.
 */
export function messagesRequest(
  adapter: ChatAdapter | null,
  channel: RoutedChannel,
  { body, upstreamModel, secret, settings, beta }: MessagesRequestInput,
): OutboundRequest {
  if (channel.provider === 'anthropic') {
    const headers = anthropicHeaders(secret, settings);
    if (beta !== undefined) headers['anthropic-beta'] = [beta].flat().join(',');
    return { path: '/v1/messages', headers, body: bodyFor(body, upstreamModel) };
  }
  const chat = messagesToChatRequest(body.json);
  if (adapter)
    return adapter.chatRequest({ body: chat, upstreamModel, secret, settings }, body.stream);
  return {
    path: '/chat/completions',
    headers: { authorization: `Bearer ${secret}` },
    body: Buffer.from(JSON.stringify({ ...chat, model: upstreamModel })),
  };
}

/** A /v1/messages/count_tokens request for an anthropic channel: the body as sent. */
export function countTokensRequest(
  channel: RoutedChannel,
  { body, upstreamModel, secret, settings, beta }: MessagesRequestInput,
): OutboundRequest {
  const headers = anthropicHeaders(secret, settings);
  if (beta !== undefined) headers['anthropic-beta'] = [beta].flat().join(',');
  return { path: '/v1/messages/count_tokens', headers, body: bodyFor(body, upstreamModel) };
}

/**
 * A /v1/responses request for a converted channel: an OpenAI chat completion (a 400 for
 * what needs OpenAI's own state or tools), in the provider's format.
 */
export function responsesRequest(
  adapter: ChatAdapter,
  { body, upstreamModel, secret, settings }: Omit<MessagesRequestInput, 'beta'>,
): OutboundRequest {
  const chat = responsesToChatRequest(body.json);
  return adapter.chatRequest({ body: chat, upstreamModel, secret, settings }, body.stream);
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

/**
 * A /v1/messages answer as Anthropic's: an anthropic channel's as it came (its usage read),
 * any other's converted from OpenAI's (after its adapter's own conversion, if any).
 */
export function messagesAnswer(
  adapter: ChatAdapter | null,
  channel: RoutedChannel,
  status: number,
  answer: Answer,
  context: AnswerContext,
): Answer {
  if (channel.provider === 'anthropic') {
    if (answer.kind === 'whole')
      return status >= 400
        ? answer
        : { ...answer, summary: summaryOf(messagesPassthroughUsage(answer.body, context)) };
    const reader = new AnthropicStreamReader(context);
    if (answer.first) reader.push(answer.first);
    return { ...answer, rest: relayedAsIs(answer.rest, reader), translator: reader };
  }
  // The converted request asked for the stream's usage chunk: the adapter must give it.
  const chat = adapter
    ? convertAnswer(adapter, 'chat.completions', status, answer, { ...context, includeUsage: true })
    : answer;
  if (chat.kind === 'whole') {
    if (status >= 400) return { kind: 'whole', body: chatErrorToMessagesError(status, chat.body) };
    const message = chatAnswerToMessage(chat.body, context);
    return { kind: 'whole', body: message.body, summary: summaryOf(message) };
  }
  const translator = new ChatToMessagesStream(context);
  const first = chat.first ? Buffer.from(translator.push(chat.first)) : null;
  return { kind: 'stream', first, rest: translated(chat.rest, translator), translator };
}

/**
 * A /v1/responses answer as OpenAI's Responses: an openai channel's as it came (its usage
 * read), any other's converted from the chat completion its adapter gave.
 */
export function responsesAnswer(
  adapter: ChatAdapter | null,
  status: number,
  answer: Answer,
  context: AnswerContext,
  body: ParsedBody,
): Answer {
  if (!adapter) {
    if (answer.kind === 'whole') {
      if (status >= 400) return answer;
      // A body that is no Response is left unread: the failover step then fails it over.
      let read: TranslatedAnswer;
      try {
        read = responsesPassthroughUsage(answer.body, context);
      } catch {
        return answer;
      }
      return { ...answer, summary: summaryOf(read) };
    }
    const reader = new ResponsesStreamReader();
    if (answer.first) reader.push(answer.first);
    return { ...answer, rest: relayedAsIs(answer.rest, reader), translator: reader };
  }
  // The converted request asked for the stream's usage chunk: the adapter must give it.
  const chat = convertAnswer(adapter, 'chat.completions', status, answer, {
    ...context,
    includeUsage: true,
  });
  const echo = responseEcho(body.json);
  if (chat.kind === 'whole') {
    // The adapter's error is in OpenAI's shape already, as this API's errors are.
    if (status >= 400) return chat;
    const response = chatAnswerToResponse(chat.body, context, echo);
    return { kind: 'whole', body: response.body, summary: summaryOf(response) };
  }
  const translator = new ChatToResponsesStream(context, echo);
  const first = chat.first ? Buffer.from(translator.push(chat.first)) : null;
  return { kind: 'stream', first, rest: translated(chat.rest, translator), translator };
}

/**
 * A token count is free: its answer (an anthropic channel's, or the edge's own) is metered
 * as no tokens, never counted again by metering's tokenizer.
 */
export function countTokensAnswer(status: number, answer: Answer, model: string): Answer {
  if (answer.kind !== 'whole' || status >= 400) return answer;
  return {
    ...answer,
    summary: {
      usage: { promptTokens: 0, completionTokens: 0 },
      model,
      completionText: '',
      items: 0,
    },
  };
}

function summaryOf({ usage, model, completionText }: TranslatedAnswer): JsonSummary {
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
