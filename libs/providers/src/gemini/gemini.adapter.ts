import type { ChatAdapter } from '../adapter.js';
import { GeminiStreamTranslator, geminiAnswer, geminiError } from './gemini-answer.js';
import { geminiEmbeddings } from './gemini-embeddings.js';
import { toGeminiRequest } from './gemini-request.js';

// Gemini's Generative Language API, v1beta (https://ai.google.dev/api).

export const geminiAdapter: ChatAdapter = {
  chatRequest({ body, upstreamModel, secret }, stream) {
    const model = encodeURIComponent(upstreamModel.replace(/^models\//, ''));
    return {
      path: stream
        ? `/v1beta/models/${model}:streamGenerateContent?alt=sse`
        : `/v1beta/models/${model}:generateContent`,
      headers: { 'x-goog-api-key': secret },
      body: Buffer.from(JSON.stringify(toGeminiRequest(body))),
    };
  },
  chatAnswer: geminiAnswer,
  chatStream: (context) => new GeminiStreamTranslator(context),
  error: geminiError,
  // Gemini refuses a revoked or unknown key with a 400 INVALID_ARGUMENT whose reason is
  // API_KEY_INVALID: for the router that is a banned key, not the client's mistake.
  healthStatus: (status, body) =>
    status === 400 && body.includes('API_KEY_INVALID') ? 401 : status,
  embeddings: geminiEmbeddings,
};
