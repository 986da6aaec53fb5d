import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import {
  MessageRole,
  MessageStatus,
  Prisma,
  PrismaService,
  type Conversation,
  type Message,
} from '@switchyard/db';
import { type AttachmentInfo } from '../attachments/attachments.service.js';
import { utcDay } from '../usage/usage-day.js';

export interface Rows<T> {
  rows: T[];
  total: number;
}

/** Which rows of a list to read. */
export interface RowWindow {
  skip: number;
  take: number;
}

/** A message with the images attached to it, in their order. */
export type MessageWithAttachments = Message & { attachments: AttachmentInfo[] };

const WITH_ATTACHMENTS = {
  attachments: {
    select: { id: true, mediaType: true, byteSize: true },
    orderBy: { position: 'asc' },
  },
} satisfies Prisma.MessageInclude;

export interface AssistantReply {
  conversationId: string;
  userId: number;
  model: string;
  content: string;
  imageUrls: string[];
  /** The tool steps that led to the reply (docs/tools.md). */
  toolSteps: object[];
  status: MessageStatus;
  errorCode: string | null;
  promptTokens: number;
  completionTokens: number;
}

@Injectable()
export class ConversationsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The user's conversations, most recently active first. */
  listConversations(userId: number, window: RowWindow): Promise<Rows<Conversation>> {
    return this.rowsAndTotal(
      this.prisma.conversation.findMany({
        where: { userId },
        orderBy: [{ updatedAt: 'desc' }, { id: 'asc' }],
        ...window,
      }),
      this.prisma.conversation.count({ where: { userId } }),
    );
  }

  /** A page of rows and the count over all pages, read in one transaction so they agree. */
  private async rowsAndTotal<T>(
    page: Prisma.PrismaPromise<T[]>,
    count: Prisma.PrismaPromise<number>,
  ): Promise<Rows<T>> {
    const [rows, total] = await this.prisma.$transaction([page, count]);
    return { rows, total };
  }

  /** The conversation, if it exists and belongs to the user. */
  findOwned(id: string, userId: number): Promise<Conversation | null> {
    return this.prisma.conversation.findFirst({ where: { id, userId } });
  }

  createConversation(
    userId: number,
    title: string,
    model: string,
    mcpServerIds: number[],
  ): Promise<Conversation> {
    return this.prisma.conversation.create({ data: { userId, title, model, mcpServerIds } });
  }

  async updateOwned(
    id: string,
    userId: number,
    fields: { title?: string; model?: string; mcpServerIds?: number[] },
  ): Promise<Conversation | null> {
    const { count } = await this.prisma.conversation.updateMany({
      where: { id, userId },
      data: fields,
    });
    return count === 0 ? null : this.findOwned(id, userId);
  }

  /** Whether a conversation of the user's was deleted (its messages and images go with it). */
  async deleteOwned(id: string, userId: number): Promise<boolean> {
    const [, { count }] = await this.prisma.$transaction([
      this.prisma.attachment.deleteMany({
        where: { message: { conversationId: id, conversation: { userId } } },
      }),
      this.prisma.conversation.deleteMany({ where: { id, userId } }),
    ]);
    return count > 0;
  }

  /**
   * A window of the conversation's messages (all, or those before `before`), counted from
   * the oldest or the latest end; the rows are oldest first either way. Null when
   * `before` is no message of the conversation.
   */
  async listMessages(
    conversationId: string,
    window: RowWindow,
    start: 'oldest' | 'latest',
    before: bigint | null,
  ): Promise<Rows<MessageWithAttachments> | null> {
    let where: Prisma.MessageWhereInput = { conversationId };
    if (before !== null) {
      const cursor = await this.prisma.message.findFirst({
        where: { id: before, conversationId },
        select: { id: true, createdAt: true },
      });
      if (!cursor) return null;
      where = {
        conversationId,
        OR: [
          { createdAt: { lt: cursor.createdAt } },
          { createdAt: cursor.createdAt, id: { lt: cursor.id } },
        ],
      };
    }
    const order = start === 'oldest' ? 'asc' : 'desc';
    const listed = await this.rowsAndTotal(
      this.prisma.message.findMany({
        where,
        include: WITH_ATTACHMENTS,
        orderBy: [{ createdAt: order }, { id: order }],
        ...window,
      }),
      this.prisma.message.count({ where }),
    );
    if (start === 'latest') listed.rows.reverse();
    return listed;
  }

  /**
   * Deletes the message and every message after it (regenerate, edit and resend); false
   * when the conversation holds no such message. Their images are kept, unsent again, so
   * the question can be sent again with them.
   */
  async deleteFrom(conversationId: string, messageId: bigint): Promise<boolean> {
    const first = await this.prisma.message.findFirst({
      where: { id: messageId, conversationId },
      select: { id: true, createdAt: true },
    });
    if (!first) return false;
    const from = {
      conversationId,
      OR: [
        { createdAt: { gt: first.createdAt } },
        { createdAt: first.createdAt, id: { gte: first.id } },
      ],
    } satisfies Prisma.MessageWhereInput;
    await this.prisma.$transaction([
      this.prisma.attachment.updateMany({
        where: { message: from },
        data: { messageId: null, unsentSince: new Date() },
      }),
      this.prisma.message.deleteMany({ where: from }),
    ]);
    return true;
  }

  /** The last `limit` messages worth sending upstream again, oldest first. */
  async recentHistory(conversationId: string, limit: number): Promise<MessageWithAttachments[]> {
    if (limit === 0) return [];
    const rows = await this.prisma.message.findMany({
      include: WITH_ATTACHMENTS,
      where: {
        conversationId,
        role: { in: [MessageRole.user, MessageRole.assistant] },
        status: { not: MessageStatus.failed },
        content: { not: '' },
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
    });
    return rows.reverse();
  }

  /**
   * Saves the question with its images (the user's, unsent: checked before). An image sent
   * meanwhile by another request fails the whole save with `conflict`.
   */
  async addUserMessage(
    conversationId: string,
    content: string,
    model: string,
    attachmentIds: string[] = [],
  ): Promise<Message> {
    return this.prisma.$transaction(async (tx) => {
      const message = await tx.message.create({
        data: { conversationId, role: MessageRole.user, content, model },
      });
      for (const [position, id] of attachmentIds.entries()) {
        const { count } = await tx.attachment.updateMany({
          where: { id, messageId: null },
          data: { messageId: message.id, position, unsentSince: null },
        });
        if (count === 0) {
          throw new ApiError('conflict', `The image ${id} was sent with another message meanwhile`);
        }
      }
      await tx.conversation.update({
        where: { id: conversationId },
        data: { updatedAt: new Date() },
      });
      return message;
    });
  }

  /**
   * Saves the reply and adds what the upstream served to the user's totals, together.
   * Null when the conversation was deleted meanwhile (the usage still counts).
   */
  async saveAssistantReply(reply: AssistantReply): Promise<Message | null> {
    const served = reply.status !== MessageStatus.failed;
    const requests = served ? 1 : 0;
    const day = utcDay(new Date());
    const addUsage = () => [
      this.prisma.chatUser.update({
        where: { id: reply.userId },
        data: {
          requestCount: { increment: requests },
          promptTokens: { increment: reply.promptTokens },
          completionTokens: { increment: reply.completionTokens },
        },
      }),
      this.prisma.chatUsageDay.upsert({
        where: { userId_day: { userId: reply.userId, day } },
        create: {
          userId: reply.userId,
          day,
          requests,
          promptTokens: reply.promptTokens,
          completionTokens: reply.completionTokens,
        },
        update: {
          requests: { increment: requests },
          promptTokens: { increment: reply.promptTokens },
          completionTokens: { increment: reply.completionTokens },
        },
      }),
      this.prisma.chatModelUsageDay.upsert({
        where: { userId_day_model: { userId: reply.userId, day, model: reply.model } },
        create: {
          userId: reply.userId,
          day,
          model: reply.model,
          requests,
          promptTokens: reply.promptTokens,
          completionTokens: reply.completionTokens,
        },
        update: {
          requests: { increment: requests },
          promptTokens: { increment: reply.promptTokens },
          completionTokens: { increment: reply.completionTokens },
        },
      }),
    ];
    const { userId: _userId, toolSteps, ...fields } = reply;
    try {
      const [message] = await this.prisma.$transaction([
        this.prisma.message.create({
          data: {
            ...fields,
            toolSteps: toolSteps,
            role: MessageRole.assistant,
          },
        }),
        this.prisma.conversation.update({
          where: { id: reply.conversationId },
          data: { updatedAt: new Date() },
        }),
        ...addUsage(),
      ]);
      return message;
    } catch (error) {
      const exists = await this.prisma.conversation.count({ where: { id: reply.conversationId } });
      if (exists > 0) throw error;
      await this.prisma.$transaction(addUsage());
      return null;
    }
  }
}
