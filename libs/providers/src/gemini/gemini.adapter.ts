import type { ChatAdapter } from '../adapter.js';
import { GeminiStreamTranslator, geminiAnswer, geminiError } from './gemini-answer.js';
import { geminiEmbeddings } from './gemini-embeddings.js';
import { toGeminiRequest } from './gemini-request.js';

// Gemini's Generative Language API, v1beta (https://ai.google.dev/api).

/**
 * Gemini says in a 400's body what is not the caller's fault: a revoked or unknown key
 * (reason API_KEY_INVALID) is a banned key for the router; FAILED_PRECONDITION (the
 * account's region is not served, its billing is off) is the channel's failure, so the
 * request fails over and the channel's health pays for it.
 */
function geminiHealthStatus(status: number, body: Buffer): number {
  if (status !== 400) return status;
  const text = body.toString('utf8');
  if (text.includes('API_KEY_INVALID')) return 401;
  return geminiStatusOf(text) === 'FAILED_PRECONDITION' ? 502 : status;
}

/** The `status` of Google's error body, when it is one. */
function geminiStatusOf(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as
      { error?: { status?: unknown } } | { error?: { status?: unknown } }[];
    const status = (Array.isArray(parsed) ? parsed[0] : parsed)?.error?.status;
    return typeof status === 'string' ? status : undefined;
  } catch {
    return undefined;
  }
}

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
  healthStatus: geminiHealthStatus,
  embeddings: geminiEmbeddings,
};
