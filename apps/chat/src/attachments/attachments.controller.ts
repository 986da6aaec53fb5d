import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiProduces,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { CurrentUser, type Principal } from '../auth/principal.js';
import { UuidPipe } from '../common/id.pipes.js';
import { AttachmentLimitsResponse, AttachmentResponse } from './attachments.dto.js';
import { AttachmentsService } from './attachments.service.js';
import { IMAGE_TYPES } from './image-type.js';

@ApiTags('attachments')
@ApiBearerAuth()
@Controller('api/attachments')
export class AttachmentsController {
  constructor(private readonly attachments: AttachmentsService) {}

  /** Uploads one image for the next message: its bytes as the body, its type as Content-Type. */
  @Post()
  @ApiConsumes(...IMAGE_TYPES)
  @ApiBody({ schema: { type: 'string', format: 'binary' } })
  @ApiResponse({ status: 201, type: AttachmentResponse })
  upload(
    @CurrentUser() principal: Principal,
    @Req() request: FastifyRequest,
  ): Promise<AttachmentResponse> {
    return this.attachments.upload(principal, request.headers['content-type'] ?? '', request.body);
  }

  @Get('limits')
  @ApiResponse({ status: 200, type: AttachmentLimitsResponse })
  limits(): AttachmentLimitsResponse {
    return this.attachments.limits();
  }

  /** The image, for its owner only; anyone else gets 404. */
  @Get(':id')
  @ApiProduces(...IMAGE_TYPES)
  @ApiResponse({ status: 200, description: 'The image bytes' })
  async read(
    @CurrentUser() principal: Principal,
    @Param('id', UuidPipe) id: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const image = await this.attachments.read(principal, id);
    await reply
      .header('content-type', image.mediaType)
      // Never in a shared cache; the browser may keep it, per session token.
      .header('cache-control', 'private, max-age=86400')
      .header('vary', 'authorization')
      .header('x-content-type-options', 'nosniff')
      .send(image.bytes);
  }
}
