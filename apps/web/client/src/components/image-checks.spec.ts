import { screenImages, sizeText } from './image-checks.js';

const MiB = 1024 * 1024;
const LIMITS = {
  mediaTypes: ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as (
    'image/png' | 'image/jpeg' | 'image/webp' | 'image/gif'
  )[],
  bytesPerImage: 5 * MiB,
  imagesPerMessage: 4,
  bytesPerMessage: 7 * MiB,
};
const file = (name: string, type: string, size: number) => ({ name, type, size });

describe('screenImages', () => {
  it('accepts images of the four types within the limits', () => {
    const files = [
      file('a.png', 'image/png', 1000),
      file('b.jpg', 'image/jpeg', MiB),
      file('c.webp', 'image/webp', 10),
      file('d.gif', 'image/gif', 10),
    ];
    expect(screenImages(files, [], LIMITS)).toEqual({ accepted: files, problems: [] });
  });

  it('names each file left out and why', () => {
    const { accepted, problems } = screenImages(
      [
        file('notes.txt', 'text/plain', 10),
        file('drawing.svg', 'image/svg+xml', 10),
        file('huge.png', 'image/png', 6 * MiB),
        file('', 'image/png', 10),
        file('fifth.png', 'image/png', 10),
      ],
      [{ size: 10 }, { size: 10 }, { size: 10 }],
      LIMITS,
    );
    expect(accepted).toEqual([file('', 'image/png', 10)]);
    expect(problems).toEqual([
      'notes.txt is not an image the chat takes: attach PNG, JPEG, WebP, GIF.',
      'drawing.svg is not an image the chat takes: attach PNG, JPEG, WebP, GIF.',
      'huge.png has 6 MiB; an image may have at most 5 MiB.',
      'fifth.png was left out: a message may carry at most 4 images.',
    ]);
  });

  it('keeps the images of one message within their bytes together', () => {
    const { accepted, problems } = screenImages(
      [file('one.png', 'image/png', 4 * MiB), file('two.png', 'image/png', 4 * MiB)],
      [],
      LIMITS,
    );
    expect(accepted.map((f) => f.name)).toEqual(['one.png']);
    expect(problems).toEqual([
      "two.png was left out: a message's images may have at most 7 MiB together.",
    ]);
  });

  it('writes sizes briefly', () => {
    expect(sizeText(5 * MiB)).toBe('5 MiB');
    expect(sizeText(1.5 * MiB)).toBe('1.5 MiB');
    expect(sizeText(800 * 1024)).toBe('800 KiB');
    expect(sizeText(10)).toBe('1 KiB');
  });
});
