import { randomUUID } from 'node:crypto';
import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { approximateTokens } from '../openai/completion.js';
import { ExchangeService } from '../openai/exchange.js';
import { COHERE_DIALECT, cohereError } from './cohere-dialect.js';

// A reranker as Cohere (https://docs.cohere.com/reference/rerank) and Jina
// (https://jina.ai/reranker) serve one: documents ordered by their relevance to a query.
// The answer carries both providers' accounting (Cohere's billed search units, Jina's
// token usage). A document's score is the share of the query's words it contains, so a
// test can tell which document will come first.

interface RerankRequest {
  model: string;
  query: string;
  documents: (string | { text: string })[];
  top_n?: number;
  return_documents?: boolean;
}

/** Cohere's limit on documents a request. */
const MAX_DOCUMENTS = 10_000;
/** Documents one search unit covers. */
const DOCUMENTS_PER_SEARCH_UNIT = 100;

function invalidRerank(body: Partial<RerankRequest> | null): string | null {
  if (typeof body?.model !== 'string' || body.model === '')
    return 'invalid request: model is required';
  if (typeof body.query !== 'string' || body.query.trim() === '')
    return 'invalid request: query must be a non-empty string';
  const { documents } = body;
  if (!Array.isArray(documents) || documents.length === 0)
    return 'invalid request: documents must be a non-empty list';
  if (documents.length > MAX_DOCUMENTS)
    return `invalid request: too many documents, at most ${MAX_DOCUMENTS} are allowed`;
  const stray = documents.findIndex(
    (d) => typeof d !== 'string' && typeof (d as { text?: unknown } | null)?.text !== 'string',
  );
  if (stray >= 0)
    return `invalid request: documents[${stray}] must be a string or an object with a text field`;
  if (body.top_n !== undefined && (!Number.isInteger(body.top_n) || body.top_n < 1))
    return 'invalid request: top_n must be a positive integer';
  if (body.return_documents !== undefined && typeof body.return_documents !== 'boolean')
    return 'invalid request: return_documents must be a boolean';
  return null;
}

function words(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
}

/**
 * The share of the query's words the document contains, plus a tenth of their overlap
 * over all words (so of two documents with every query word, the tighter one wins).
 */
export function relevance(query: string, document: string): number {
  const asked = words(query);
  const found = words(document);
  const shared = [...asked].filter((word) => found.has(word)).length;
  if (asked.size === 0 || shared === 0) return 0;
  const union = new Set([...asked, ...found]).size;
  return Number(((shared / asked.size) * 0.9 + (shared / union) * 0.1).toFixed(6));
}

@Controller('v1')
export class RerankController {
  constructor(private readonly exchanges: ExchangeService) {}

  @Post('rerank')
  @HttpCode(200)
  async rerank(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: Partial<RerankRequest> | null,
  ): Promise<void> {
    const invalid = invalidRerank(body);
    if (invalid) {
      await reply.status(400).send(cohereError(400, { message: invalid }));
      return;
    }
    const rerank = body as RerankRequest;
    const texts = rerank.documents.map((d) => (typeof d === 'string' ? d : d.text));
    const tokens =
      approximateTokens(rerank.query) + texts.reduce((sum, t) => sum + approximateTokens(t), 0);
    const exchange = await this.exchanges.open(request, reply, tokens, COHERE_DIALECT);
    if (!exchange) return;
    exchange.lease.finish('served', 0);
    const ranked = texts
      .map((text, index) => ({ index, relevance_score: relevance(rerank.query, text) }))
      .sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index)
      .slice(0, rerank.top_n ?? texts.length);
    await reply.send({
      id: randomUUID(),
      model: exchange.fault.resolvedModel ?? rerank.model,
      results: ranked.map((result) =>
        rerank.return_documents === true
          ? { ...result, document: { text: texts[result.index] } }
          : result,
      ),
      meta: {
        api_version: { version: '2' },
        billed_units: { search_units: Math.ceil(texts.length / DOCUMENTS_PER_SEARCH_UNIT) },
      },
      usage: { total_tokens: tokens },
    });
  }
}
