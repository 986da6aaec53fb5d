import { type RoutedChannel } from '@switchyard/contracts';
import {
  AnthropicStreamReader,
  ChatToMessagesStream,
  chatAnswerToMessage,
  chatErrorToMessagesError,
  inputText,
  messagesPassthroughUsage,
  messagesToChatRequest,
  type AnswerContext,
  type ChatAdapter,
} from '@switchyard/providers';
import { type Answer } from '../../proxy/upstream-answer.js';
import { ANTHROPIC_SHAPE, checkAnthropicMessages, toAnthropicChannel } from '../anthropic-shape.js';
import {
  adapterOf,
  answerContext,
  convertAnswer,
  converted,
  healthOf,
  readAnswer,
  summaryOf,
  translatedAnswer,
} from '../conversion.js';
import { type ChannelTarget, type ForwardedFrontApi, type UpstreamRequest } from '../front-api.js';
import {
  chatBody,
  checkStreamFlag,
  invalid,
  parseJson,
  promptTokensEstimate,
  renamedJsonBody,
  requiredModel,
} from '../request-body.js';

// Anthropic's Messages API, for Anthropic's SDKs and agents (docs/providers.md, "Anthropic's
// API in front"): an anthropic channel gets the client's bytes, and its answer is read for
// its usage as it passes; every other channel gets it as an OpenAI chat completion (in its
// provider's format when it has an adapter), and its answer is converted back.

/**
 * A converted channel's request: an OpenAI chat completion (a 400 for what has none), in
 * the provider's format when the channel has an adapter.
 */
function asChatCompletion(
  adapter: ChatAdapter | null,
  json: Record<string, unknown>,
  stream: boolean,
  { upstreamModel, secret, settings }: ChannelTarget,
): UpstreamRequest {
  const chat = messagesToChatRequest(json);
  if (adapter)
    return converted(adapter.chatRequest({ body: chat, upstreamModel, secret, settings }, stream));
  return {
    path: '/chat/completions',
    providerPath: false,
    headers: { authorization: `Bearer ${secret}` },
    body: Buffer.from(JSON.stringify({ ...chat, model: upstreamModel })),
  };
}

/**
 * The answer as Anthropic's: an anthropic channel's as it came (its usage read), any
 * other's converted from OpenAI's (after its adapter's own conversion, if any).
 */
function messagesAnswer(
  adapter: ChatAdapter | null,
  channel: RoutedChannel,
  status: number,
  answer: Answer,
  context: AnswerContext,
  promptText: () => string,
): Answer {
  if (channel.provider === 'anthropic') {
    if (answer.kind === 'whole')
      return status >= 400
        ? answer
        : { ...answer, summary: summaryOf(messagesPassthroughUsage(answer.body, context)) };
    return readAnswer(answer, new AnthropicStreamReader(context));
  }
  // The converted request asked for the stream's usage chunk: the adapter must give it.
  const chat = adapter
    ? convertAnswer(adapter, status, answer, { ...context, includeUsage: true })
    : answer;
  if (chat.kind === 'whole') {
    if (status >= 400) return { kind: 'whole', body: chatErrorToMessagesError(status, chat.body) };
    const message = chatAnswerToMessage(chat.body, context);
    return { kind: 'whole', body: message.body, summary: summaryOf(message) };
  }
  return translatedAnswer(
    chat,
    new ChatToMessagesStream({
      ...context,
      inputTokensEstimate: promptTokensEstimate(promptText()),
    }),
  );
}

export const messages: ForwardedFrontApi = {
  kind: 'forwarded',
  name: 'messages',
  endpoint: 'messages',
  routes: [{ method: 'POST', path: '/v1/messages' }],
  ...ANTHROPIC_SHAPE,
  renamed: renamedJsonBody,

  parse(raw) {
    const { json, bytes } = parseJson(raw);
    const model = requiredModel(json);
    if (
      typeof json.max_tokens !== 'number' ||
      !Number.isInteger(json.max_tokens) ||
      json.max_tokens < 1
    )
      throw invalid("'max_tokens' is required and must be a positive integer.", 'max_tokens');
    checkAnthropicMessages(json);
    checkStreamFlag(json);
    return chatBody(json, bytes, model, json.stream === true, () => inputText('messages', json));
  },

  call(body, target) {
    const adapter = adapterOf(target.channel);
    return {
      request:
        target.channel.provider === 'anthropic'
          ? toAnthropicChannel('/v1/messages', body, target)
          : asChatCompletion(adapter, body.json, body.stream, target),
      healthStatus: healthOf(adapter),
      answer: (status, answer) =>
        messagesAnswer(
          adapter,
          target.channel,
          status,
          answer,
          answerContext(body, target.upstreamModel),
          () => body.promptText(),
        ),
    };
  },
};
