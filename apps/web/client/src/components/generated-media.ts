import { type ShownMessage } from './MessageView.js';

// What the reply view needs to show generated media: the songs a reply links to, a file
// name for each download, the prompt an image answers (its text alternative), and the
// download itself. The files stay where the provider put them: the page shows their URLs.

/** A link to a sound file, as music relays put them in their replies' text. */
const AUDIO_LINK =
  /https?:\/\/[^\s<>"'()[\]]+?\.(?:wav|mp3|ogg|oga|opus|m4a|aac|flac)(?:\?[^\s<>"'()[\]]*)?(?=[\s<>"'()[\]]|$)/gi;

/** The sound files a reply links to, each once, in the order they appear. */
export function audioUrlsIn(text: string): string[] {
  return [...new Set(text.match(AUDIO_LINK) ?? [])];
}

const EXTENSIONS: Record<'image' | 'audio', string> = { image: 'png', audio: 'wav' };

function lastSegment(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.split('/').at(-1) ?? '');
  } catch {
    return '';
  }
}

/** The file's own name when its URL has one; else `image-2.png`, `song-1.wav`. */
export function mediaFileName(url: string, kind: 'image' | 'audio', index: number): string {
  const stem = kind === 'image' ? 'image' : 'song';
  const dataType = /^data:(?:image|audio)\/([a-z0-9]+)/i.exec(url)?.[1];
  if (dataType) return `${stem}-${index + 1}.${dataType.toLowerCase()}`;
  const last = lastSegment(url);
  return /^[\w.-]+\.[a-z0-9]{2,5}$/i.test(last) ? last : `${stem}-${index + 1}.${EXTENSIONS[kind]}`;
}

/**
 * Gives each drawn reply the question before it as its prompt, for its images' text
 * alternative. A message that already has it stays the same object, so its memoised view
 * is not drawn again.
 */
export function withPrompts(messages: ShownMessage[]): ShownMessage[] {
  let question: string | undefined;
  return messages.map((message) => {
    if (message.role === 'user') question = message.content;
    if (message.role !== 'assistant' || message.images.length === 0) return message;
    if (message.prompt !== undefined || question === undefined) return message;
    return { ...message, prompt: question };
  });
}

/**
 * Saves a generated file. A link's `download` works only on the page's own origin, so a
 * provider's file is fetched (allowed by the page's policy for media hosts) and saved from
 * memory; a host that refuses the read gets the file opened in a new tab instead.
 */
export async function downloadMedia(url: string, fileName: string): Promise<void> {
  const save = (href: string) => {
    const link = document.createElement('a');
    link.href = href;
    link.download = fileName;
    link.click();
  };
  if (url.startsWith('data:')) {
    save(url);
    return;
  }
  try {
    const response = await fetch(url, { credentials: 'omit' });
    if (!response.ok) throw new Error(`status ${response.status}`);
    const objectUrl = URL.createObjectURL(await response.blob());
    save(objectUrl);
    setTimeout(() => URL.revokeObjectURL(objectUrl), 0);
  } catch {
    window.open(url, '_blank', 'noopener,noreferrer');
  }
}
