import { ChatChunkDecoder } from './sse.js';

// The chat completion stream the translators of OpenAI's chunks read (Responses and Messages
// in front), fed in pieces split anywhere, as an upstream's bytes arrive.

interface Chunk {
  text: string;
}

/** A reader that writes down what it is handed, and finishes on a chunk saying `stop`. */
function recorder() {
  const seen: string[] = [];
  let finished = false;
  const decoder = new ChatChunkDecoder<Chunk>({
    finished: () => finished,
    chunk: (chunk) => {
      seen.push(chunk.text);
      finished = chunk.text === 'stop';
      return `<${chunk.text}>`;
    },
    done: () => {
      seen.push('[DONE]');
      return '<done>';
    },
  });
  return { decoder, seen };
}

function feed(decoder: ChatChunkDecoder<Chunk>, stream: Buffer, size: number): string {
  let out = '';
  for (let at = 0; at < stream.length; at += size)
    out += decoder.push(stream.subarray(at, at + size));
  return out;
}

describe('ChatChunkDecoder', () => {
  const stream = Buffer.from(
    [
      'data: {"text":"héllo"}\n\n',
      ': keep-alive\n\n',
      'data: {"text":"wörld"}\r\n\r\n',
      'data: [DONE]\n\n',
    ].join(''),
  );

  it.each([1, 2, 3, 7, stream.length])(
    'hands over the same chunks and [DONE] however the bytes are split (%i bytes a piece)',
    (size) => {
      const { decoder, seen } = recorder();
      expect(feed(decoder, stream, size)).toBe('<héllo><wörld><done>');
      expect(seen).toEqual(['héllo', 'wörld', '[DONE]']);
    },
  );

  it('skips data that is not JSON and goes on with the next event', () => {
    const { decoder, seen } = recorder();
    const out = feed(
      decoder,
      Buffer.from('data: {"text":\n\ndata: not json\n\ndata: {"text":"after"}\n\n'),
      4,
    );
    expect(out).toBe('<after>');
    expect(seen).toEqual(['after']);
  });

  it('drops what comes after the reader has finished, in the same bytes and later ones', () => {
    const { decoder, seen } = recorder();
    expect(
      decoder.push(
        Buffer.from('data: {"text":"stop"}\n\ndata: {"text":"late"}\n\ndata: [DONE]\n\n'),
      ),
    ).toBe('<stop>');
    expect(decoder.push(Buffer.from('data: {"text":"later"}\n\n'))).toBe('');
    expect(seen).toEqual(['stop']);
  });
});
