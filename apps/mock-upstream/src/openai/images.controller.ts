import { randomBytes } from 'node:crypto';
import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { ImageGenerationRequest, ImageGenerationResponse } from '@switchyard/contracts';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { approximateTokens } from './completion.js';
import { ExchangeService } from './exchange.js';
import { providerError } from './openai-error.js';

/** A 1×1 transparent PNG: a real image, as small as one can be. */
const PIXEL_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

@Controller('v1/images')
export class ImagesController {
  constructor(private readonly exchanges: ExchangeService) {}

  @Post('generations')
  @HttpCode(200)
  async generate(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Body() body: Partial<ImageGenerationRequest>,
  ): Promise<void> {
    if (typeof body?.prompt !== 'string' || body.prompt.trim() === '') {
      await reply.status(400).send(providerError(400, { message: "'prompt' is required." }));
      return;
    }
    const exchange = await this.exchanges.open(request, reply, approximateTokens(body.prompt));
    if (!exchange) return;
    const count = Math.min(Math.max(Number(body.n ?? 1) || 1, 1), 10);
    const base64 = body.response_format === 'b64_json';
    const response: ImageGenerationResponse = {
      created: Math.floor(Date.now() / 1000),
      data: Array.from({ length: count }, () =>
        base64
          ? { b64_json: PIXEL_PNG, revised_prompt: body.prompt }
          : {
              url: `https://images.mock-upstream.invalid/${randomBytes(8).toString('hex')}.png`,
              revised_prompt: body.prompt,
            },
      ),
    };
    exchange.lease.finish('served', 0);
    await reply.send(response);
  }
}
