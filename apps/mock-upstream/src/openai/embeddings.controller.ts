import { createHash } from 'node:crypto';
import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { EmbeddingRequest, EmbeddingResponse } from '@switchyard/contracts';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { approximateTokens } from './completion.js';
import { ExchangeService } from './exchange.js';
import { providerError } from './openai-error.js';

/** A deterministic unit vector for a text: same text, same embedding. */
export function embed(text: string, dimensions: number): number[] {
  const values: number[] = [];
  for (let block = 0; values.length < dimensions; block += 1) {
    const digest = createHash('sha256').update(`${block}:${text}`).digest();
    for (let i = 0; i + 1 < digest.length && values.length < dimensions; i += 2) {
      values.push(digest.readInt16BE(i) / 32768);
    }
  }
  const norm = Math.hypot(...values) || 1;
  return values.map((v) => v / norm);
}

/** The embedding as OpenAI sends it: floats, or little-endian float32 bytes in base64. */
export function encodedEmbedding(vector: number[], base64: boolean): number[] | string {
  return base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
}

function inputs(input: EmbeddingRequest['input']): string[] | null {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.every((item) => typeof item === 'string')) return input;
  if (Array.isArray(input) && input.length > 0) return input.map((item) => JSON.stringify(item));
  return null;
}

@Controller('v1')
export class EmbeddingsController {
  constructor(private readonly exchanges: ExchangeService) {}

  @Post('embeddings')
  @HttpCode(200)
  async create(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: Partial<EmbeddingRequest>,
  ): Promise<void> {
    const texts = inputs(body?.input as EmbeddingRequest['input']);
    if (typeof body?.model !== 'string' || !texts) {
      await reply
        .status(400)
        .send(providerError(400, { message: "'model' and 'input' are required." }));
      return;
    }
    const promptTokens = texts.reduce((sum, text) => sum + approximateTokens(text), 0);
    const exchange = await this.exchanges.open(request, reply, promptTokens);
    if (!exchange) return;
    const dimensions =
      typeof body.dimensions === 'number' && body.dimensions > 0
        ? Math.min(body.dimensions, 3072)
        : 8;
    const asBase64 = body.encoding_format === 'base64';
    const response: EmbeddingResponse = {
      object: 'list',
      model: exchange.fault.resolvedModel ?? body.model,
      data: texts.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: encodedEmbedding(embed(text, dimensions), asBase64),
      })),
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    };
    exchange.lease.finish('served', 0);
    await reply.send(response);
  }
}
