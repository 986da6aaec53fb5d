import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { skipTake } from '@switchyard/service';
import { type Conversation } from '@switchyard/db';
import { AttachmentsService } from '../attachments/attachments.service.js';
import { type Principal } from '../auth/principal.js';
import { type PageQuery } from '../common/page-query.js';
import { McpServersService } from '../mcp/mcp-servers.service.js';
import { ModelsService } from '../models/models.service.js';
import {
  type ConversationPageResponse,
  type ConversationResponse,
  type CreateConversationDto,
  type MessagePageQuery,
  type MessagePageResponse,
  type UpdateConversationDto,
} from './conversations.dto.js';
import { toConversation, toMessage } from './conversations.mapper.js';
import { ConversationsRepository } from './conversations.repository.js';

const DEFAULT_TITLE = 'New conversation';

/** Another user's conversation is answered exactly like one that does not exist. */
export function conversationNotFound(id: string): ApiError {
  return new ApiError('not_found', `No conversation with id ${id}`);
}

@Injectable()
export class ConversationsService {
  constructor(
    private readonly conversations: ConversationsRepository,
    private readonly models: ModelsService,
    private readonly mcpServers: McpServersService,
    private readonly attachments: AttachmentsService,
  ) {}

  async create(principal: Principal, dto: CreateConversationDto): Promise<ConversationResponse> {
    const model = await this.models.resolveForUse(principal, dto.model);
    const mcpServerIds = [...new Set(dto.mcpServerIds ?? [])];
    await this.mcpServers.assertSelectable(mcpServerIds);
    const conversation = await this.conversations.createConversation(
      principal.id,
      dto.title ?? DEFAULT_TITLE,
      model.name,
      mcpServerIds,
    );
    return toConversation(conversation);
  }

  async list(principal: Principal, query: PageQuery): Promise<ConversationPageResponse> {
    const { rows, total } = await this.conversations.listConversations(
      principal.id,
      skipTake(query),
    );
    return { items: rows.map(toConversation), total };
  }

  async get(principal: Principal, id: string): Promise<ConversationResponse> {
    return toConversation(await this.findOwned(principal, id));
  }

  async update(
    principal: Principal,
    id: string,
    dto: UpdateConversationDto,
  ): Promise<ConversationResponse> {
    await this.findOwned(principal, id);
    if (dto.model !== undefined) await this.models.resolveForUse(principal, dto.model);
    const fields = { ...dto };
    if (dto.mcpServerIds !== undefined) {
      fields.mcpServerIds = [...new Set(dto.mcpServerIds)];
      await this.mcpServers.assertSelectable(fields.mcpServerIds);
    }
    const updated = await this.conversations.updateOwned(id, principal.id, fields);
    if (!updated) throw conversationNotFound(id);
    return toConversation(updated);
  }

  async remove(principal: Principal, id: string): Promise<void> {
    await this.findOwned(principal, id);
    const images = await this.attachments.idsOfConversation(id);
    if (!(await this.conversations.deleteOwned(id, principal.id))) throw conversationNotFound(id);
    await this.attachments.forgetBytes(images);
  }

  async messages(
    principal: Principal,
    id: string,
    query: MessagePageQuery,
  ): Promise<MessagePageResponse> {
    await this.findOwned(principal, id);
    const before = query.before === undefined ? null : BigInt(query.before);
    const listed = await this.conversations.listMessages(
      id,
      skipTake(query),
      query.start ?? 'oldest',
      before,
    );
    if (!listed)
      throw new ApiError('not_found', `No message ${query.before} in conversation ${id}`);
    return { items: listed.rows.map(toMessage), total: listed.total };
  }

  /** Takes the conversation back to before `messageId`, which goes with all that follows. */
  async deleteMessagesFrom(principal: Principal, id: string, messageId: number): Promise<void> {
    await this.findOwned(principal, id);
    if (!(await this.conversations.deleteFrom(id, BigInt(messageId)))) {
      throw new ApiError('not_found', `No message ${messageId} in conversation ${id}`);
    }
  }

  private async findOwned(principal: Principal, id: string): Promise<Conversation> {
    const conversation = await this.conversations.findOwned(id, principal.id);
    if (!conversation) throw conversationNotFound(id);
    return conversation;
  }
}
