import { type IncomingHttpHeaders } from 'node:http';
import { type GatewayEndpoint, type GatewayError } from '@switchyard/contracts';
import { speech } from './audio/speech.api.js';
import { transcriptions, translations } from './audio/transcriptions.api.js';
import { chatCompletions } from './chat-completions/chat-completions.api.js';
import { completions } from './completions/completions.api.js';
import { countTokens } from './count-tokens/count-tokens.api.js';
import { embeddings } from './embeddings/embeddings.api.js';
import { type ErrorReply, type ForwardedFrontApi, type FrontApi } from './front-api.js';
import { geminiCountTokens } from './gemini/count-tokens.api.js';
import { geminiEmbedContent } from './gemini/embed-content.api.js';
import { generateContent } from './gemini/generate-content.api.js';
import { geminiModels } from './gemini/models.api.js';
import { images } from './images/images.api.js';
import { messages } from './messages/messages.api.js';
import { models } from './models/models.api.js';
import { moderations } from './moderations/moderations.api.js';
import { openAIErrorReply } from './openai-shape.js';
import { rerank } from './rerank/rerank.api.js';
import { responses } from './responses/responses.api.js';
import { storedResponses } from './responses/stored-responses.api.js';

// Every API the edge offers in front, one line each (how to add one:
// docs/architecture.md, "Adding a front API"). proxy/ registers their routes and serves
// them; nothing else names one.

export const FRONT_APIS: readonly FrontApi[] = [
  chatCompletions,
  embeddings,
  images,
  models,
  responses,
  storedResponses,
  messages,
  countTokens,
  generateContent,
  geminiCountTokens,
  geminiEmbedContent,
  geminiModels,
  completions,
  moderations,
  rerank,
  speech,
  transcriptions,
  translations,
];

export const FORWARDED_APIS: readonly ForwardedFrontApi[] = FRONT_APIS.filter(
  (api): api is ForwardedFrontApi => api.kind === 'forwarded',
);

const byEndpoint = new Map<GatewayEndpoint, ForwardedFrontApi>(
  FORWARDED_APIS.map((api) => [api.endpoint, api]),
);

/** The API usage records name by `endpoint`. */
export function frontApiOf(endpoint: GatewayEndpoint): ForwardedFrontApi {
  const api = byEndpoint.get(endpoint);
  if (!api) throw new Error(`No front API is registered for the endpoint ${endpoint}.`);
  return api;
}

/** Route paths, longest first: a URL belongs to the API whose path it starts with. */
const byPath = FRONT_APIS.flatMap((api) => api.routes.map((route) => ({ api, path: route.path })))
  .map(({ api, path }) => ({ api, path: path.split('/:')[0]! }))
  .sort((a, b) => b.path.length - a.path.length);

/**
 * A failure on `url` in the error shape of its API: OpenAI's, Anthropic's under
 * /v1/messages, Google's under /v1beta and on Gemini's `models/{model}:{method}` URLs. A
 * URL no API owns (an unknown one) gets OpenAI's.
 */
export function errorReplyAt(
  url: string,
  error: GatewayError,
  headers: IncomingHttpHeaders = {},
): ErrorReply {
  const path = url.split('?')[0]!;
  const claimed = FRONT_APIS.find((api) => api.claims?.(path));
  const owner = claimed ?? byPath.find(({ path: prefix }) => url.startsWith(prefix))?.api;
  return owner ? owner.errorReply(error, headers) : openAIErrorReply(error);
}
