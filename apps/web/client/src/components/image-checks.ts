import { type AttachmentLimits } from '../api/types.js';

// The composer's check of images before they are uploaded, with the server's limits
// (GET /api/attachments/limits), so a wrong file is explained at once. The server checks
// again, and the bytes too: a file's type here is only what it claims.

const MiB = 1024 * 1024;

/** "5 MiB", "1.5 MiB", "800 KiB". */
export function sizeText(bytes: number): string {
  if (bytes >= MiB) return `${Number((bytes / MiB).toFixed(1))} MiB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KiB`;
}

const TYPE_NAMES: Record<string, string> = {
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
  'image/webp': 'WebP',
  'image/gif': 'GIF',
};

export function typeName(mediaType: string): string {
  return TYPE_NAMES[mediaType] ?? mediaType;
}

export interface Screened<F> {
  accepted: F[];
  /** One sentence per file left out, naming it and why. */
  problems: string[];
}

/**
 * Which of `files` may join the `attached` images of the message: of a type the server
 * takes, within the size of one image, the number per message and the bytes per message.
 */
export function screenImages<F extends { name: string; type: string; size: number }>(
  files: F[],
  attached: { size: number }[],
  limits: AttachmentLimits,
): Screened<F> {
  const accepted: F[] = [];
  const problems: string[] = [];
  let count = attached.length;
  let total = attached.reduce((sum, image) => sum + image.size, 0);
  const types = limits.mediaTypes.map(typeName).join(', ');
  for (const file of files) {
    const name = file.name || 'The pasted image';
    if (!(limits.mediaTypes as string[]).includes(file.type)) {
      problems.push(`${name} is not an image the chat takes: attach ${types}.`);
    } else if (file.size > limits.bytesPerImage) {
      problems.push(
        `${name} has ${sizeText(file.size)}; an image may have at most ${sizeText(limits.bytesPerImage)}.`,
      );
    } else if (count >= limits.imagesPerMessage) {
      problems.push(
        `${name} was left out: a message may carry at most ${limits.imagesPerMessage} images.`,
      );
    } else if (total + file.size > limits.bytesPerMessage) {
      problems.push(
        `${name} was left out: a message's images may have at most ${sizeText(limits.bytesPerMessage)} together.`,
      );
    } else {
      accepted.push(file);
      count += 1;
      total += file.size;
    }
  }
  return { accepted, problems };
}
