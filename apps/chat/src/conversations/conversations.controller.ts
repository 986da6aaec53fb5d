import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import { ApiBearerAuth, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { type FastifyReply } from 'fastify';
import { CurrentUser, type Principal } from '../auth/principal.js';
import { UuidPipe } from '../common/id.pipes.js';
import { PageQuery } from '../common/page-query.js';
import {
  ConversationPageResponse,
  ConversationResponse,
  CreateConversationDto,
  DeleteMessagesQuery,
  MessagePageQuery,
  MessagePageResponse,
  SendMessageDto,
  UpdateConversationDto,
} from './conversations.dto.js';
import { ConversationsService } from './conversations.service.js';
import { openEventStream } from './event-stream.js';
import { MessagesService } from './messages.service.js';

@ApiTags('conversations')
@ApiBearerAuth()
@Controller('api/conversations')
export class ConversationsController {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly messages: MessagesService,
  ) {}

  @Post()
  @ApiResponse({ status: 201, type: ConversationResponse })
  create(
    @CurrentUser() principal: Principal,
    @Body() dto: CreateConversationDto,
  ): Promise<ConversationResponse> {
    return this.conversations.create(principal, dto);
  }

  @Get()
  @ApiResponse({ status: 200, type: ConversationPageResponse })
  list(
    @CurrentUser() principal: Principal,
    @Query() query: PageQuery,
  ): Promise<ConversationPageResponse> {
    return this.conversations.list(principal, query);
  }

  @Get(':id')
  @ApiResponse({ status: 200, type: ConversationResponse })
  get(
    @CurrentUser() principal: Principal,
    @Param('id', UuidPipe) id: string,
  ): Promise<ConversationResponse> {
    return this.conversations.get(principal, id);
  }

  @Patch(':id')
  @ApiResponse({ status: 200, type: ConversationResponse })
  update(
    @CurrentUser() principal: Principal,
    @Param('id', UuidPipe) id: string,
    @Body() dto: UpdateConversationDto,
  ): Promise<ConversationResponse> {
    return this.conversations.update(principal, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  remove(@CurrentUser() principal: Principal, @Param('id', UuidPipe) id: string): Promise<void> {
    return this.conversations.remove(principal, id);
  }

  /** The conversation's messages, oldest first; pages from either end (`MessagePageQuery`). */
  @Get(':id/messages')
  @ApiResponse({ status: 200, type: MessagePageResponse })
  history(
    @CurrentUser() principal: Principal,
    @Param('id', UuidPipe) id: string,
    @Query() query: MessagePageQuery,
  ): Promise<MessagePageResponse> {
    return this.conversations.messages(principal, id, query);
  }

  /** Deletes a message and every later one: how a reply is regenerated, or a question
   * edited and sent again. */
  @Delete(':id/messages')
  @HttpCode(204)
  deleteMessages(
    @CurrentUser() principal: Principal,
    @Param('id', UuidPipe) id: string,
    @Query() query: DeleteMessagesQuery,
  ): Promise<void> {
    return this.conversations.deleteMessagesFrom(principal, id, query.from);
  }

  /**
   * Streams the reply as server-sent events: `delta` {content}, `image` {urls}, then `done`
   * {messageId, usage} or `error` {code, message, address?}. Refusals before the stream
   * (validation, permission, no API key record) are JSON errors with their status.
   */
  @Post(':id/messages')
  @ApiProduces('text/event-stream')
  @ApiResponse({
    status: 200,
    description: 'text/event-stream of delta, image, done and error events',
  })
  async send(
    @CurrentUser() principal: Principal,
    @Param('id', UuidPipe) id: string,
    @Body() dto: SendMessageDto,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const prepared = await this.messages.prepare(principal, id, dto);
    await this.messages.deliver(prepared, openEventStream(reply));
  }
}
