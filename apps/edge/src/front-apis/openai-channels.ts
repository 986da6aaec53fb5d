import { DEFAULT_AZURE_API_VERSION, chatAdapterFor } from '@switchyard/providers';
import { GatewayError, type RoutedChannel } from '@switchyard/contracts';
import { type ChannelCall, type ChannelTarget, type UpstreamRequest } from './front-api.js';

// The endpoints only OpenAI's own API has (legacy completions, moderations, rerank, audio):
// no provider adapter converts them, so a channel serves them only when its upstream speaks
// them as they are. Which providers do is each API's to say (docs/providers.md, "Front
// APIs and providers"); the others are passed over with a refusal that names the provider,
// so failover tries the next channel and the client reads why when none could.

export type OpenAIFamily = 'openai' | 'azure';

/** The channel's provider when it is one of `served`; a refusal (the channel is skipped) otherwise. */
export function servedBy(
  channel: RoutedChannel,
  served: readonly OpenAIFamily[],
  endpoint: string,
): OpenAIFamily {
  const provider = channel.provider ?? 'openai';
  if ((served as readonly string[]).includes(provider)) return provider as OpenAIFamily;
  throw new GatewayError(
    'invalid_request',
    `The model is served here by a ${provider} channel, which does not offer ${endpoint}.`,
    'model',
  );
}

/**
 * `operation` (`completions`, `audio/speech`) for one channel: on an openai channel the
 * OpenAI route under its base URL, on an azure one the deployment's route (its deployment is
 * the channel's upstream model, as for chat: docs/providers.md, "Azure OpenAI").
 */
export function openAIFamilyRequest(
  provider: OpenAIFamily,
  target: ChannelTarget,
  operation: string,
  body: Buffer,
  contentType?: string,
): UpstreamRequest {
  const typed: Record<string, string> = contentType ? { 'content-type': contentType } : {};
  if (provider === 'openai') {
    return {
      path: `/${operation}`,
      providerPath: false,
      // Set only when the body is not JSON: the key then travels as it would by default.
      ...(contentType ? { headers: { authorization: `Bearer ${target.secret}`, ...typed } } : {}),
      body,
    };
  }
  const apiVersion = target.settings.apiVersion ?? DEFAULT_AZURE_API_VERSION;
  return {
    path: `/openai/deployments/${encodeURIComponent(target.upstreamModel)}/${operation}?api-version=${encodeURIComponent(apiVersion)}`,
    providerPath: true,
    headers: { 'api-key': target.secret, ...typed },
    body,
  };
}

/** Azure names a deployment its resource lacks with a 404: another channel may have it. */
export function familyHealth(provider: OpenAIFamily): ChannelCall['healthStatus'] {
  if (provider === 'openai') return null;
  const azure = chatAdapterFor('azure');
  return azure && ((status, body) => azure.healthStatus(status, body));
}
