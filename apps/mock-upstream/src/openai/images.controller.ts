import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { ImageGenerationRequest, ImageGenerationResponse } from '@switchyard/contracts';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { gradientPng, mediaSeed } from '../media/generated-media.js';
import { mediaUrl } from '../media/media.controller.js';
import { approximateTokens } from './completion.js';
import { ExchangeService } from './exchange.js';
import { providerError } from './openai-error.js';

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
    const prompt = body?.prompt;
    if (typeof prompt !== 'string' || prompt.trim() === '') {
      await reply.status(400).send(providerError(400, { message: "'prompt' is required." }));
      return;
    }
    const exchange = await this.exchanges.open(request, reply, approximateTokens(prompt));
    if (!exchange) return;
    const count = Math.min(Math.max(Number(body.n ?? 1) || 1, 1), 10);
    const base64 = body.response_format === 'b64_json';
    const response: ImageGenerationResponse = {
      created: Math.floor(Date.now() / 1000),
      // Each image of a prompt is its own: the first has the prompt's seed, the others the
      // prompt and their index's.
      data: Array.from({ length: count }, (_, index) => {
        const seed = mediaSeed(index === 0 ? prompt : `${prompt}\n${index}`);
        return base64
          ? { b64_json: gradientPng(seed).toString('base64'), revised_prompt: prompt }
          : { url: mediaUrl(request, 'image', seed), revised_prompt: prompt };
      }),
    };
    exchange.lease.finish('served', 0);
    await reply.send(response);
  }
}
