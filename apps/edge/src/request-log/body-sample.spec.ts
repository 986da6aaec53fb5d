import { BodyRedactor, ByteSample, logBody } from './body-sample.js';

// What the request log keeps of a body: redacted before it is cut, never longer than the
// cap, storable by Postgres, and a stream's copy bounded whatever its length.

const redactor = new BodyRedactor(['acct-[0-9]{6}']);

describe('logBody', () => {
  it('masks credentials, named credentials and configured patterns', () => {
    const body = JSON.stringify({
      messages: [
        { content: 'key sk-abcdefghijklmnop1234, "password": "hunter22", acct-654321 ok' },
      ],
    });
    const logged = logBody(Buffer.from(body), 4_096, redactor);
    expect(logged.truncated).toBe(false);
    expect(logged.text).not.toContain('abcdefghijklmnop1234');
    expect(logged.text).not.toContain('hunter22');
    expect(logged.text).not.toContain('acct-654321');
    expect(logged.text).toContain(' ok');
    // Still JSON: the redaction kept the string's escaping whole.
    expect(() => JSON.parse(logged.text) as unknown).not.toThrow();
  });

  it('redacts a secret the cap cuts through, before cutting', () => {
    const secret = `sk-${'a1B2'.repeat(10)}`;
    const body = `${'x'.repeat(1_020)}${secret}`;
    const logged = logBody(body, 1_030, redactor);
    expect(logged.truncated).toBe(true);
    expect(logged.text.length).toBeLessThanOrEqual(1_030);
    expect(logged.text).not.toContain('a1B2');
  });

  it('keeps text Postgres can store, even cut inside a character', () => {
    const body = Buffer.concat([Buffer.from('a\u0000b'), Buffer.from('é'.repeat(2_000))]);
    const logged = logBody(body, 1_024, redactor);
    expect(logged.text).not.toContain('\u0000');
    expect(logged.text.length).toBeLessThanOrEqual(1_024);
    expect(logged.truncated).toBe(true);
  });

  it('logs nothing of no body', () => {
    expect(logBody(null, 1_024, redactor)).toEqual({ text: '', truncated: false });
  });
});

describe('ByteSample', () => {
  it('keeps the first bytes of a stream and knows it was longer', () => {
    const sample = new ByteSample(1_024);
    for (let i = 0; i < 1_000; i += 1) sample.add(Buffer.from(`data: {"n":${i}}\n\n`));
    const logged = sample.logged(redactor);
    expect(logged.truncated).toBe(true);
    expect(logged.text.startsWith('data: {"n":0}')).toBe(true);
    expect(logged.text.length).toBe(1_024);
  });

  it('keeps a short stream whole', () => {
    const sample = new ByteSample(1_024);
    sample.add(Buffer.from('data: {"a":1}\n\n'));
    sample.add('data: [DONE]\n\n');
    expect(sample.logged(redactor)).toEqual({
      text: 'data: {"a":1}\n\ndata: [DONE]\n\n',
      truncated: false,
    });
  });
});
