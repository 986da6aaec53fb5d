import { GatewayError, type ChannelProvider } from '@switchyard/contracts';
import type { ChatAdapter } from './adapter.js';
export { outboundHeaders } from './adapter.js';
export {
  awsCredentials,
  isAwsKeyPair,
  regionOf,
  signatureHeaders,
} from './bedrock/bedrock-credentials.js';
import { anthropicAdapter } from './anthropic/anthropic.adapter.js';
import { azureAdapter } from './azure/azure.adapter.js';
import { bedrockAdapter } from './bedrock/bedrock.adapter.js';
import { geminiAdapter } from './gemini/gemini.adapter.js';

export type {
  AnswerContext,
  ChatAdapter,
  ChatRequestInput,
  EmbeddingsAdapter,
  OutboundRequest,
  StreamTranslator,
  TranslatedAnswer,
  TranslatedError,
} from './adapter.js';
export { DEFAULT_ANTHROPIC_VERSION, anthropicHeaders } from './anthropic/anthropic.adapter.js';
export { DEFAULT_AZURE_API_VERSION } from './azure/azure.adapter.js';
export { defaultMaxTokens } from './anthropic/anthropic-request.js';
export {
  AnthropicStreamReader,
  ChatToMessagesStream,
  chatAnswerToMessage,
  chatErrorToMessagesError,
  messagesErrorBody,
  messagesErrorEvent,
  messagesPassthroughUsage,
} from './messages/messages-answer.js';
export { messagesToChatRequest } from './messages/messages-request.js';
export {
  ChatToResponsesStream,
  ResponsesStreamReader,
  chatAnswerToResponse,
  responseEcho,
  responsesErrorEvent,
  responsesPassthroughUsage,
  type ResponseEcho,
} from './responses/responses-answer.js';
export { responsesStateRefusal, responsesToChatRequest } from './responses/responses-request.js';
export { TokenCounter, encodingFor, type TokenizerEncoding } from './token-counter.js';
export {
  chatInputTexts,
  inputText,
  messagesInputTexts,
  responsesInputTexts,
  type InputTextsApi,
} from './input-texts.js';

const ADAPTERS: Partial<Record<ChannelProvider, ChatAdapter>> = {
  anthropic: anthropicAdapter,
  azure: azureAdapter,
  bedrock: bedrockAdapter,
  gemini: geminiAdapter,
};

/**
 * The adapter that converts chat completions for a provider; null for `openai`, whose
 * channels get the client's bytes as sent. A provider without an adapter yet is a 400.
 */
export function chatAdapterFor(provider: ChannelProvider): ChatAdapter | null {
  if (provider === 'openai') return null;
  const adapter = ADAPTERS[provider];
  if (!adapter)
    throw new GatewayError(
      'invalid_request',
      `The model is served here by a ${provider} channel, which this gateway cannot convert requests for yet.`,
      'model',
    );
  return adapter;
}
