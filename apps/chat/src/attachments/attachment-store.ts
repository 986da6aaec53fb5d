import { Injectable } from '@nestjs/common';
import { PrismaService } from '@switchyard/db';

/**
 * Where attachments' bytes live, by attachment id. The `Attachment` row (owner, type, size,
 * message) is written first and deleted with its conversation; the store holds only the
 * bytes, so an object store can take Postgres' place by implementing these three methods.
 */
export abstract class AttachmentStore {
  abstract put(id: string, bytes: Buffer): Promise<void>;
  /** The bytes, or null when the store has none for `id`. */
  abstract get(id: string): Promise<Buffer | null>;
  /** Forgets the bytes of these attachments; ids it does not hold are ignored. */
  abstract delete(ids: string[]): Promise<void>;
}

/**
 * The default store: a `bytea` row per attachment (`AttachmentBlob`), which also goes when
 * its `Attachment` row is deleted, so `delete` has usually nothing left to do.
 */
@Injectable()
export class PostgresAttachmentStore extends AttachmentStore {
  constructor(private readonly prisma: PrismaService) {
    super();
  }

  async put(id: string, bytes: Buffer): Promise<void> {
    await this.prisma.attachmentBlob.create({ data: { id, data: new Uint8Array(bytes) } });
  }

  async get(id: string): Promise<Buffer | null> {
    const blob = await this.prisma.attachmentBlob.findUnique({ where: { id } });
    return blob ? Buffer.from(blob.data) : null;
  }

  async delete(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.prisma.attachmentBlob.deleteMany({ where: { id: { in: ids } } });
  }
}
