import { detectImageType } from './image-type.js';

const bytes = (...parts: (number[] | string)[]): Uint8Array =>
  Uint8Array.from(
    parts.flatMap((part) =>
      typeof part === 'string' ? [...part].map((c) => c.charCodeAt(0)) : part,
    ),
  );

describe('image types by their bytes', () => {
  it.each([
    ['image/png', bytes([0x89], 'PNG', [0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])],
    ['image/jpeg', bytes([0xff, 0xd8, 0xff, 0xe0, 0, 16], 'JFIF')],
    ['image/gif', bytes('GIF89a', [1, 0, 1, 0])],
    ['image/gif', bytes('GIF87a', [1, 0, 1, 0])],
    ['image/webp', bytes('RIFF', [36, 0, 0, 0], 'WEBPVP8 ')],
  ])('recognises %s', (type, data) => {
    expect(detectImageType(data)).toBe(type);
  });

  it.each([
    ['text', bytes('hello, world')],
    ['an SVG (scripts can hide in it)', bytes('<svg xmlns="http://www.w3.org/2000/svg"/>')],
    ['a RIFF that is not WebP', bytes('RIFF', [36, 0, 0, 0], 'WAVEfmt ')],
    ['a PNG signature cut short', bytes([0x89], 'PNG')],
    ['nothing', bytes()],
  ])('refuses %s', (_what, data) => {
    expect(detectImageType(data)).toBeNull();
  });
});
