import { Controller, Get, Param, Res } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { providerError } from '../openai/openai-error.js';
import { gradientPng, MEDIA_SEED, mediaPath, toneWav } from './generated-media.js';

// The mock's own media host: what its image and music answers link to. Like a provider's
// storage, it is public (no key) and may be read from any page: the chat web app shows
// the files and fetches them for its download button.

/** Where a client reached the mock, so the links it hands out lead back to it. */
export function mediaUrl(request: FastifyRequest, kind: 'image' | 'audio', seed: string): string {
  return `${request.protocol}://${request.host}${mediaPath(kind, seed)}`;
}

@Controller('media')
export class MediaController {
  @Get('images/:file')
  async image(@Param('file') file: string, @Res() reply: FastifyReply): Promise<void> {
    await this.serve(reply, file, '.png', 'image/png', gradientPng);
  }

  @Get('audio/:file')
  async audio(@Param('file') file: string, @Res() reply: FastifyReply): Promise<void> {
    await this.serve(reply, file, '.wav', 'audio/wav', toneWav);
  }

  private async serve(
    reply: FastifyReply,
    file: string,
    extension: string,
    type: string,
    make: (seed: string) => Buffer,
  ): Promise<void> {
    const seed = file.endsWith(extension) ? file.slice(0, -extension.length) : '';
    if (!MEDIA_SEED.test(seed)) {
      await reply.status(404).send(providerError(404, { message: `No media named ${file}.` }));
      return;
    }
    await reply
      .header('content-type', type)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('access-control-allow-origin', '*')
      .header('cross-origin-resource-policy', 'cross-origin')
      .send(make(seed));
  }
}
