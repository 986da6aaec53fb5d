import { type ChatMessage } from '../api/types.js';
import { sizeText, typeName } from './image-checks.js';

/**
 * A conversation as a Markdown document: each message under who said it, drawn images as
 * image links, so it reads well anywhere Markdown is shown. The user's attached images are
 * named, not linked: their addresses open only with the user's session.
 */
export function conversationAsMarkdown(title: string, messages: ChatMessage[]): string {
  const parts = [`# ${title}`];
  for (const message of messages) {
    const who =
      message.role === 'user' ? 'You' : `Assistant${message.model ? ` (${message.model})` : ''}`;
    const images = message.images.map((url, index) => `![Image ${index + 1}](${url})`);
    const attached = (message.attachments ?? []).map(
      (image, index) =>
        `*Attached image ${index + 1}: ${typeName(image.mediaType)}, ${sizeText(image.byteSize)} (kept in Switchyard, not in this file)*`,
    );
    parts.push(
      `## ${who}`,
      [message.content, ...attached, ...images].filter((p) => p !== '').join('\n\n'),
    );
  }
  return `${parts.join('\n\n')}\n`;
}

/** A file name from a title: letters, digits and dashes only. */
export function exportFileName(title: string): string {
  const stem = title
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return `${stem || 'conversation'}.md`;
}
