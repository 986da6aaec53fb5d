import { type ReportedUsage } from '@switchyard/contracts';
import { type ForwardedFrontApi } from '../front-api.js';
import { openAIFamilyRequest, servedBy } from '../openai-channels.js';
import { OPENAI_SHAPE } from '../openai-shape.js';
import {
  bodyFor,
  invalid,
  parseJson,
  promptEstimate,
  renamedJsonBody,
  requiredModel,
} from '../request-body.js';

// Rerank in Cohere's and Jina's shape, as the relays (new-api, LiteLLM) serve it at
// `/v1/rerank` (docs/providers.md, "Rerank"): only openai channels, whose upstream is such a
// relay or a provider that speaks it, get the client's bytes. Billed by what the answer
// reports: its search units, each as SEARCH_UNIT_TOKENS input tokens, else its tokens.

/**
 * A search unit bills as this many input tokens, so a model's input price per million
 * tokens reads as its price per thousand search units (Cohere's $2 per 1,000 searches is an
 * input price of 2,000,000).
 */
export const SEARCH_UNIT_TOKENS = 1_000;

/** Cohere counts a search unit per hundred documents. */
const DOCUMENTS_PER_SEARCH_UNIT = 100;

function checkDocuments(documents: unknown): unknown[] {
  if (!Array.isArray(documents) || documents.length === 0)
    throw invalid("'documents' must be a non-empty array.", 'documents');
  documents.forEach((document: unknown, index) => {
    const text = (document as { text?: unknown } | null)?.text;
    if (typeof document !== 'string' && typeof text !== 'string') {
      throw invalid(
        `'documents[${index}]' must be a string or an object with a 'text' string.`,
        `documents[${index}]`,
      );
    }
  });
  return documents;
}

function documentText(document: unknown): string {
  return typeof document === 'string' ? document : (document as { text: string }).text;
}

/** A JSON answer as an object; null when it is none. */
function jsonObject(body: Buffer): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** What a rerank answer bills: its search units, else its tokens; null when it says neither. */
export function rerankUsage(answer: {
  meta?: { billed_units?: { search_units?: unknown } };
  usage?: { total_tokens?: unknown };
}): ReportedUsage | null {
  const units = answer.meta?.billed_units?.search_units;
  if (typeof units === 'number' && Number.isInteger(units) && units >= 0)
    return { promptTokens: units * SEARCH_UNIT_TOKENS, completionTokens: 0 };
  const tokens = answer.usage?.total_tokens;
  if (typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0)
    return { promptTokens: tokens, completionTokens: 0 };
  return null;
}

/**
 * Cohere's refusal (`{id, message}`) in OpenAI's error shape, as every /v1 error is; an
 * error body already in it passes as it is.
 */
function openAIError(status: number, body: Buffer): Buffer {
  let parsed: { error?: unknown; message?: unknown; detail?: unknown };
  try {
    parsed = JSON.parse(body.toString('utf8')) as typeof parsed;
  } catch {
    return body;
  }
  if (typeof parsed !== 'object' || parsed === null || parsed.error !== undefined) return body;
  const message = typeof parsed.message === 'string' ? parsed.message : parsed.detail;
  if (typeof message !== 'string') return body;
  const type = status === 429 ? 'rate_limit_error' : 'invalid_request_error';
  return Buffer.from(JSON.stringify({ error: { message, type, param: null, code: null } }));
}

export const rerank: ForwardedFrontApi = {
  kind: 'forwarded',
  name: 'rerank',
  endpoint: 'rerank',
  routes: [{ method: 'POST', path: '/v1/rerank' }],
  ...OPENAI_SHAPE,
  renamed: renamedJsonBody,

  parse(raw) {
    const { json, bytes } = parseJson(raw);
    const model = requiredModel(json);
    if (typeof json.query !== 'string' || json.query === '')
      throw invalid("'query' is required and must be a string.", 'query');
    const documents = checkDocuments(json.documents);
    const topN = json.top_n;
    if (topN !== undefined && topN !== null && !(Number.isInteger(topN) && (topN as number) > 0))
      throw invalid("'top_n' must be a positive integer.", 'top_n');
    const returnDocuments = json.return_documents;
    if (
      returnDocuments !== undefined &&
      returnDocuments !== null &&
      typeof returnDocuments !== 'boolean'
    )
      throw invalid("'return_documents' must be a boolean.", 'return_documents');
    const query = json.query;
    const units = Math.ceil(documents.length / DOCUMENTS_PER_SEARCH_UNIT);
    return {
      json,
      raw: bytes,
      model,
      stream: false,
      estimatedTokens: promptEstimate(bytes),
      worstCaseOutputTokens: 0,
      // The hold takes what the search units would bill, when it is more than the body's bytes.
      worstCaseInputTokens: Math.max(bytes.length, units * SEARCH_UNIT_TOKENS),
      promptText: () => [query, ...documents.map(documentText)].join('\n'),
    };
  },

  call(body, target) {
    const provider = servedBy(target.channel, ['openai'], 'rerank');
    return {
      request: openAIFamilyRequest(provider, target, 'rerank', bodyFor(body, target.upstreamModel)),
      healthStatus: null,
      answer: (status, answer) => {
        if (answer.kind !== 'whole') return answer;
        if (status >= 400) return { kind: 'whole', body: openAIError(status, answer.body) };
        const json = jsonObject(answer.body);
        // An answer that is no JSON keeps no summary: failover then takes it for a broken one.
        if (!json) return answer;
        const model = typeof json.model === 'string' ? json.model : target.upstreamModel;
        return {
          ...answer,
          summary: { usage: rerankUsage(json), model, completionText: '', items: 0 },
        };
      },
    };
  },
};
