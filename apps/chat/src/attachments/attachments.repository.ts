import { Injectable } from '@nestjs/common';
import { PrismaService, type Attachment } from '@switchyard/db';

@Injectable()
export class AttachmentsRepository {
  constructor(private readonly prisma: PrismaService) {}

  create(userId: number, mediaType: string, byteSize: number): Promise<Attachment> {
    return this.prisma.attachment.create({ data: { userId, mediaType, byteSize } });
  }

  /** The attachment, if it belongs to the user. */
  findOwned(id: string, userId: number): Promise<Attachment | null> {
    return this.prisma.attachment.findFirst({ where: { id, userId } });
  }

  /** Those of `ids` that are the user's and belong to no message yet. */
  findUnsent(userId: number, ids: string[]): Promise<Attachment[]> {
    return this.prisma.attachment.findMany({
      where: { id: { in: ids }, userId, messageId: null },
    });
  }

  /** The ids of the images attached to the conversation's messages. */
  async idsOfConversation(conversationId: string): Promise<string[]> {
    const rows = await this.prisma.attachment.findMany({
      where: { message: { conversationId } },
      select: { id: true },
    });
    return rows.map((row) => row.id);
  }

  /** Deletes the user's attachments that have belonged to no message since before `cutoff`. */
  async deleteUnsentBefore(userId: number, cutoff: Date): Promise<string[]> {
    const stale = await this.prisma.attachment.findMany({
      where: {
        userId,
        messageId: null,
        OR: [{ unsentSince: null }, { unsentSince: { lt: cutoff } }],
      },
      select: { id: true },
    });
    const ids = stale.map((row) => row.id);
    await this.deleteMany(ids);
    return ids;
  }

  async deleteMany(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.prisma.attachment.deleteMany({ where: { id: { in: ids } } });
  }
}
