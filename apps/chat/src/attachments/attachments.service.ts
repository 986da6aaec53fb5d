import { Injectable, Logger } from '@nestjs/common';
import { ApiError, IMAGE_LIMITS, imageTooLargeMessage } from '@switchyard/contracts';
import { type Attachment } from '@switchyard/db';
import { type Principal } from '../auth/principal.js';
import { type UsableModel } from '../models/models.service.js';
import { AttachmentStore } from './attachment-store.js';
import { type AttachmentLimitsResponse, type AttachmentResponse } from './attachments.dto.js';
import { AttachmentsRepository } from './attachments.repository.js';
import { IMAGE_TYPES, detectImageType, isImageType, type ImageType } from './image-type.js';

/** Uploaded images that were never sent (or whose message was deleted) go after a day. */
const UNSENT_LIFETIME_MS = 24 * 60 * 60 * 1000;
const MiB = 1024 * 1024;

/** What a message needs to know of an image it carries. */
export interface AttachmentInfo {
  id: string;
  mediaType: string;
  byteSize: number;
}

export function toAttachment(attachment: AttachmentInfo): AttachmentResponse {
  return {
    id: attachment.id,
    mediaType: attachment.mediaType as ImageType,
    byteSize: attachment.byteSize,
    url: `/api/attachments/${attachment.id}`,
  };
}

/** Another user's image is answered exactly like one that does not exist. */
function attachmentNotFound(id: string): ApiError {
  return new ApiError('not_found', `No attachment with id ${id}`);
}

@Injectable()
export class AttachmentsService {
  private readonly logger = new Logger(AttachmentsService.name);

  constructor(
    private readonly attachments: AttachmentsRepository,
    private readonly store: AttachmentStore,
  ) {}

  limits(): AttachmentLimitsResponse {
    return { mediaTypes: [...IMAGE_TYPES], ...IMAGE_LIMITS };
  }

  /**
   * Keeps an uploaded image for the user's next message. The declared type must be one we
   * take and the bytes must be that format: a renamed file is refused, whatever it claims.
   */
  async upload(
    principal: Principal,
    declaredType: string,
    body: unknown,
  ): Promise<AttachmentResponse> {
    const declared = declaredType.split(';')[0]!.trim().toLowerCase();
    if (!isImageType(declared) || !Buffer.isBuffer(body)) {
      throw new ApiError(
        'image_type_not_supported',
        `Attach PNG, JPEG, WebP or GIF images, sent with their type as Content-Type (got ${declared || 'none'})`,
      );
    }
    if (body.length === 0) throw new ApiError('validation_failed', 'The image is empty');
    if (body.length > IMAGE_LIMITS.bytesPerImage) {
      throw new ApiError('image_too_large', imageTooLargeMessage());
    }
    const actual = detectImageType(body);
    if (actual !== declared) {
      throw new ApiError(
        'image_type_not_supported',
        actual === null
          ? `The file is not a PNG, JPEG, WebP or GIF image, whatever its type says (${declared})`
          : `The file says it is ${declared} but its bytes are ${actual}`,
      );
    }
    await this.forgetUnsent(principal.id);
    const attachment = await this.attachments.create(principal.id, actual, body.length);
    try {
      await this.store.put(attachment.id, body);
    } catch (error) {
      await this.attachments.deleteMany([attachment.id]);
      throw error;
    }
    return toAttachment(attachment);
  }

  /** The image's bytes and type, for its owner only. */
  async read(principal: Principal, id: string): Promise<{ mediaType: string; bytes: Buffer }> {
    const attachment = await this.attachments.findOwned(id, principal.id);
    const bytes = attachment ? await this.store.get(id) : null;
    if (!attachment || !bytes) throw attachmentNotFound(id);
    return { mediaType: attachment.mediaType, bytes };
  }

  /**
   * The user's unsent images `ids`, checked for a message to `model`, in the order given:
   * throws when the model reads no images, there are too many or too large together, or
   * one is not the user's or already sent.
   */
  async forMessage(principal: Principal, ids: string[], model: UsableModel): Promise<Attachment[]> {
    if (ids.length === 0) return [];
    if (model.purpose !== 'chat' || !model.vision) {
      throw new ApiError(
        'model_cannot_see_images',
        `The model "${model.name}" does not read images: choose a model that does, or send the message without them`,
      );
    }
    if (ids.length > IMAGE_LIMITS.imagesPerMessage) {
      throw new ApiError(
        'too_many_images',
        `A message may carry at most ${IMAGE_LIMITS.imagesPerMessage} images (got ${ids.length})`,
      );
    }
    const found = await this.attachments.findUnsent(principal.id, ids);
    const ordered = ids.map((id) => found.find((attachment) => attachment.id === id));
    const missing = ordered.flatMap((attachment, index) =>
      attachment
        ? []
        : [{ field: `attachmentIds[${index}]`, message: `No unsent image ${ids[index]}` }],
    );
    if (missing.length > 0 || new Set(ids).size !== ids.length) {
      throw new ApiError(
        'validation_failed',
        'Each image must be one you uploaded, not yet sent, and given once',
        missing,
      );
    }
    const attachments = ordered.filter((attachment) => attachment !== undefined);
    const total = attachments.reduce((sum, attachment) => sum + attachment.byteSize, 0);
    if (total > IMAGE_LIMITS.bytesPerMessage) {
      throw new ApiError(
        'image_too_large',
        `A message's images may have at most ${IMAGE_LIMITS.bytesPerMessage / MiB} MiB together`,
      );
    }
    return attachments;
  }

  /** The image as a data URL: the upstream cannot reach our storage. */
  async dataUrl(attachment: AttachmentInfo): Promise<string | null> {
    const bytes = await this.store.get(attachment.id);
    return bytes ? `data:${attachment.mediaType};base64,${bytes.toString('base64')}` : null;
  }

  idsOfConversation(conversationId: string): Promise<string[]> {
    return this.attachments.idsOfConversation(conversationId);
  }

  /** Deletes the bytes of attachments whose rows are gone (a deleted conversation's). */
  async forgetBytes(ids: string[]): Promise<void> {
    try {
      await this.store.delete(ids);
    } catch (error) {
      // The conversation is gone already; the bytes are unreachable, not exposed.
      this.logger.error({ message: 'attachment bytes not deleted', err: error, ids });
    }
  }

  private async forgetUnsent(userId: number): Promise<void> {
    const cutoff = new Date(Date.now() - UNSENT_LIFETIME_MS);
    const ids = await this.attachments.deleteUnsentBefore(userId, cutoff);
    await this.forgetBytes(ids);
  }
}
