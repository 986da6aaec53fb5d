export { outboundHeaders } from './adapter.js';
export { chatAdapterFor } from './adapters.js';
export {
  ChannelClient,
  ChannelUnreachable,
  readAtMost,
  upstreamTarget,
  type ChannelCall,
  type ChannelClientOptions,
  type ChannelResponse,
} from './channel-client.js';
export {
  chatPing,
  chatRequestFor,
  type ChannelChat,
  type ChannelChatTarget,
} from './channel-chat.js';
export {
  awsCredentials,
  isAwsKeyPair,
  regionOf,
  signatureHeaders,
} from './bedrock/bedrock-credentials.js';

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
export {
  ChatToGeminiStream,
  GeminiFraming,
  GeminiStreamRelay,
  chatAnswerToGemini,
  chatErrorToGeminiError,
  embeddingsToGemini,
  geminiErrorBody,
  geminiPassthroughUsage,
  geminiStatusName,
  geminiUpstreamError,
} from './gemini/front-answer.js';
export {
  geminiInputText,
  geminiToChatRequest,
  geminiToEmbeddingsRequest,
  jsonSchemaOf,
} from './gemini/front-request.js';
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
