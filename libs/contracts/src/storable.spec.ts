import { type UsageRecord } from './queues.js';
import { storablePrefix, storableText, storableUsageRecord } from './storable.js';

describe('storable text', () => {
  it('replaces NUL and lone surrogates with U+FFFD, and keeps pairs', () => {
    expect(storableText('a\u0000b')).toBe('a\uFFFDb');
    expect(storableText('a\uD800b\uDC00c')).toBe('a\uFFFDb\uFFFDc');
    expect(storableText('x\u{1F600}y')).toBe('x\u{1F600}y');
  });

  it('returns a clean text as it is', () => {
    const text = 'plain text';
    expect(storableText(text)).toBe(text);
  });

  it('never halves a surrogate pair when it cuts', () => {
    expect(storablePrefix('ab\u{1F600}', 3)).toBe('ab');
    expect(storablePrefix('ab\u{1F600}', 4)).toBe('ab\u{1F600}');
  });

  it('makes every text field of a usage record storable', () => {
    const record = {
      requestId: 'r1',
      tokenId: 1,
      channelId: null,
      keyId: null,
      endpoint: 'chat.completions',
      model: `m\u0000${'a'.repeat(126)}\u{1F600}`,
      upstreamModel: 'u\uDFFF',
      stream: false,
      status: 200,
      errorCode: 'e\u0000',
      usage: null,
      promptText: 'p\u0000',
      completionText: 'c\uD83D',
      latencyMs: 1,
      firstByteMs: null,
      attempts: 1,
      clientIp: null,
      requestedAt: 0,
    } satisfies UsageRecord;
    expect(storableUsageRecord(record)).toEqual({
      ...record,
      model: `m\uFFFD${'a'.repeat(126)}`,
      upstreamModel: 'u\uFFFD',
      errorCode: 'e\uFFFD',
      promptText: 'p\uFFFD',
      completionText: 'c\uFFFD',
    });
  });
});
