import { Writable } from 'node:stream';
import { createLogger } from './logger.js';
import { maskCredentials } from './redaction.js';
import { runWithRequestId } from './request-context.js';

function capture(): {
  stream: Writable;
  lines: () => Record<string, unknown>[];
  text: () => string;
} {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return {
    stream,
    text: () => text,
    lines: () =>
      text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

describe('createLogger', () => {
  it('writes JSON lines with the service, level, message and the request id in scope', () => {
    const out = capture();
    const logger = createLogger({ service: 'edge', level: 'info', destination: out.stream });
    runWithRequestId('req-123', () => logger.info({ route: '/v1/x' }, 'handled'));
    logger.debug('not at this level');
    expect(out.lines()).toEqual([
      expect.objectContaining({
        service: 'edge',
        level: 'info',
        message: 'handled',
        requestId: 'req-123',
        route: '/v1/x',
      }),
    ]);
  });

  it('never lets a secret reach a log line', () => {
    const out = capture();
    const logger = createLogger({ service: 'admin', level: 'info', destination: out.stream });
    logger.info(
      {
        password: 'hunter2hunter2',
        headers: { authorization: 'Bearer abc.def' },
        key: 'upstream-raw-key',
      },
      'login',
    );
    logger.info(
      {
        note: 'token sk-abcdefghijklmnop leaked in text',
        deep: { a: { b: 'Bearer sess-abcdefghij' } },
      },
      'free text',
    );
    const text = out.text();
    for (const secret of [
      'hunter2hunter2',
      'abc.def',
      'upstream-raw-key',
      'sk-abcdefghijklmnop',
      'sess-abcdefghij',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(text).toContain('[redacted]');
  });
});

describe('maskCredentials', () => {
  it('masks bearer credentials and sk-/sess-/a2a- tokens, leaving the rest', () => {
    expect(
      maskCredentials('Authorization: Bearer eyJhbGciOi.x.y and sk-1234567890abc, sess-zzzzzzzzzz'),
    ).toBe('Authorization: Bearer [redacted] and sk-[redacted], sess-[redacted]');
    expect(maskCredentials('key a2a-abcdefghijklmnop')).toBe('key a2a-[redacted]');
    expect(maskCredentials('a normal sentence about sk- prefixes')).toBe(
      'a normal sentence about sk- prefixes',
    );
  });
});
