import { registerSecret } from '@switchyard/observability';
import { chatAdapterFor } from '@switchyard/providers';
import { type Answer } from '../proxy/upstream-answer.js';
import { convertAnswer } from './conversion.js';

// An upstream's error in the middle of a stream reaches the client as an event in the
// client's format, quoting the upstream's words: without the channel's key.

const KEY = 'anthropic.0123abcd.upstream-credential';

// The AsyncIterator an upstream's stream is, with chunks that are ready at once: nothing
// to await, yet only an async generator has that shape.
// eslint-disable-next-line @typescript-eslint/require-await
async function* chunks(...texts: string[]): AsyncGenerator<Buffer> {
  for (const text of texts) yield Buffer.from(text);
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

async function collect(answer: Answer): Promise<string> {
  if (answer.kind !== 'stream') throw new Error('not a stream');
  let text = answer.first?.toString() ?? '';
  for (let next = await answer.rest.next(); !next.done; next = await answer.rest.next())
    text += next.value.toString();
  return text;
}

describe('a converted stream that fails mid-way', () => {
  it("says why in the client's format, without the key the upstream quoted", async () => {
    // The edge registers every key it opens (key-vault.ts).
    registerSecret(KEY);
    const start = sse('message_start', {
      type: 'message_start',
      message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 3, output_tokens: 0 } },
    });
    const failure = sse('error', {
      type: 'error',
      error: { type: 'authentication_error', message: `invalid x-api-key: ${KEY}` },
    });
    const answer = convertAnswer(
      chatAdapterFor('anthropic')!,
      200,
      { kind: 'stream', first: Buffer.from(start), rest: chunks(failure) },
      { model: 'claude', includeUsage: false, created: 0, base64: false },
    );
    const text = await collect(answer);
    expect(text).toContain('authentication_error');
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(KEY);
  });
});
