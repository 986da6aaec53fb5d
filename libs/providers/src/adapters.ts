import { GatewayError, type ChannelProvider } from '@switchyard/contracts';
import type { ChatAdapter } from './adapter.js';
import { anthropicAdapter } from './anthropic/anthropic.adapter.js';
import { azureAdapter } from './azure/azure.adapter.js';
import { bedrockAdapter } from './bedrock/bedrock.adapter.js';
import { geminiAdapter } from './gemini/gemini.adapter.js';

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
