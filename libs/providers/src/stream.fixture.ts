import type { StreamTranslator } from './adapter.js';

// What every adapter spec does with a stream: feed it in pieces and read back OpenAI's events.

/** Feeds a stream in pieces of `size` bytes, so events and characters are split anywhere. */
export function translate(translator: StreamTranslator, stream: Buffer, size: number): unknown[] {
  let out = '';
  for (let at = 0; at < stream.length; at += size)
    out += translator.push(stream.subarray(at, at + size));
  out += translator.end();
  return out
    .split('\n\n')
    .filter((event) => event !== '')
    .map((event) => {
      expect(event.startsWith('data: ')).toBe(true);
      const data = event.slice(6);
      return data === '[DONE]' ? data : JSON.parse(data);
    });
}
