import type { ChatAdapter, ChatRequestInput, OutboundRequest } from '../adapter.js';
import { AzureStreamTranslator, azureAnswer, azureError } from './azure-answer.js';

// Azure OpenAI: OpenAI's bodies under a deployment path, keyed by `api-key`
// (https://learn.microsoft.com/azure/ai-foundry/openai/reference). The deployment is the
// channel's upstream model name (its model mapping).

/** The GA `api-version` sent when the channel names none. */
export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

/** The first API version whose streams report usage (`stream_options.include_usage`). */
const STREAM_USAGE_SINCE = '2024-09-01';

function deploymentRequest(
  { upstreamModel, secret, settings }: ChatRequestInput,
  operation: string,
  body: Record<string, unknown>,
): OutboundRequest {
  const apiVersion = settings.apiVersion ?? DEFAULT_AZURE_API_VERSION;
  return {
    path: `/openai/deployments/${encodeURIComponent(upstreamModel)}/${operation}?api-version=${encodeURIComponent(apiVersion)}`,
    headers: { 'api-key': secret },
    body: Buffer.from(JSON.stringify({ ...body, model: upstreamModel })),
  };
}

export const azureAdapter: ChatAdapter = {
  chatRequest(input, stream) {
    const apiVersion = input.settings.apiVersion ?? DEFAULT_AZURE_API_VERSION;
    // Streams are metered from the provider's count whenever the API version can give it;
    // the usage chunk reaches the client only when it asked (azure-answer.ts).
    const body =
      stream && apiVersion >= STREAM_USAGE_SINCE
        ? {
            ...input.body,
            stream_options: {
              ...(input.body.stream_options as object | undefined),
              include_usage: true,
            },
          }
        : input.body;
    return deploymentRequest(input, 'chat/completions', body);
  },
  chatAnswer: azureAnswer,
  chatStream: (context) => new AzureStreamTranslator(context),
  error: azureError,
  // DeploymentNotFound: the channel maps the model to a deployment its resource lacks;
  // another channel may serve the request.
  healthStatus: (status) => (status === 404 ? 502 : status),
  embeddings: {
    request: (input) => deploymentRequest(input, 'embeddings', input.body),
    // Already OpenAI's list of embeddings, with its usage.
    answer: (body) => body,
  },
};
