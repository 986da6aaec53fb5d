import type { ProviderSettings } from '@switchyard/contracts';
import type { ChatAdapter } from '../adapter.js';
import { AnthropicStreamTranslator, anthropicAnswer, anthropicError } from './anthropic-answer.js';
import { toAnthropicRequest } from './anthropic-request.js';

/** The version of the Messages API sent when the channel names none. */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

/** The Messages API's authentication and version headers for a channel. */
export function anthropicHeaders(
  secret: string,
  settings: ProviderSettings,
): Record<string, string> {
  return {
    'x-api-key': secret,
    'anthropic-version': settings.anthropicVersion ?? DEFAULT_ANTHROPIC_VERSION,
  };
}

export const anthropicAdapter: ChatAdapter = {
  chatRequest({ body, upstreamModel, secret, settings }, stream) {
    return {
      path: '/v1/messages',
      headers: anthropicHeaders(secret, settings),
      body: Buffer.from(JSON.stringify(toAnthropicRequest(body, upstreamModel, stream))),
    };
  },
  chatAnswer: anthropicAnswer,
  chatStream: (context) => new AnthropicStreamTranslator(context),
  error: anthropicError,
  // 529 overloaded: the account is fine, the provider is busy; back off like a 429.
  healthStatus: (status) => (status === 529 ? 429 : status),
};
