import { Writable } from 'node:stream';
import { createLogger } from './logger.js';
import {
  KnownSecrets,
  REDACTED,
  maskCredentials,
  redactAndCut,
  redactSecrets,
  registerSecret,
} from './redaction.js';

describe('redactSecrets', () => {
  it('removes a given secret wherever it appears, whatever its shape', () => {
    const secret = 'my-odd!secret%value';
    expect(redactSecrets(`Incorrect API key provided: ${secret}.`, [secret])).toBe(
      `Incorrect API key provided: ${REDACTED}.`,
    );
    expect(redactSecrets(`url?token=${encodeURIComponent(secret)}`, [secret])).not.toContain(
      encodeURIComponent(secret),
    );
  });

  it('removes each part of a composite key, and the credential of a header value', () => {
    const bedrock = 'AKIDEXAMPLE1:wJalrXUtnFEMIK7MDENGbPxRfiCY:sessiontokenvalue';
    const text = redactSecrets(
      'The security token sessiontokenvalue is invalid for wJalrXUtnFEMIK7MDENGbPxRfiCY',
      [bedrock],
    );
    expect(text).toBe(`The security token ${REDACTED} is invalid for ${REDACTED}`);
    expect(redactSecrets('rejected: s3cr3t-header-value', ['Bearer s3cr3t-header-value'])).toBe(
      `rejected: ${REDACTED}`,
    );
  });

  it('leaves short secrets and ordinary text alone', () => {
    expect(redactSecrets('the key abc was refused', ['abc'])).toBe('the key abc was refused');
    const prose = 'The model claude-3-5-sonnet-20241022 is not served at /v1/chat/completions.';
    expect(redactSecrets(prose)).toBe(prose);
  });

  it('removes every registered secret, even when the caller names none', () => {
    registerSecret('registered-upstream-secret-1');
    expect(redactSecrets('echo: registered-upstream-secret-1!')).toBe(`echo: ${REDACTED}!`);
  });

  it('cuts after redacting, so no prefix of a secret survives the cut', () => {
    const secret = 'zz-topsecret-0123456789';
    const text = `${'x'.repeat(10)} ${secret}`;
    expect(redactAndCut(text, 20, [secret])).toBe(`${'x'.repeat(10)} ${REDACTED}`.slice(0, 20));
    expect(redactAndCut(text, 20, [secret])).not.toContain('zz-top');
  });
});

describe('maskCredentials', () => {
  it.each([
    ['Incorrect API key provided: sk-proj-abc123DEF456ghi789', 'sk-[redacted]'],
    ['x-api-key sk-ant-api03-AAAAAAAAAAAA', 'sk-[redacted]'],
    ['The AWS access key AKIAIOSFODNN7EXAMPLE is unknown', 'AKIA[redacted]'],
    ['temporary ASIAIOSFODNN7EXAMPLE', 'ASIA[redacted]'],
    ['Authorization: Bearer abc.def.ghi', 'Bearer [redacted]'],
    ['Authorization: Basic dXNlcjpwYXNzd29yZA==', 'Basic [redacted]'],
    ['{"x-api-key":"plainvalue"}', '"x-api-key":"[redacted]"'],
    // JSON inside a JSON string (a prompt in a logged body): the escaping stays valid.
    ['{"content":"my \\"api_key\\": \\"plainvalue\\""}', '\\"api_key\\": \\"[redacted]\\"'],
    ['GET /v1beta/models?key=AIzaSyA-example-value', '?key=[redacted]'],
    ['key AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI', 'AIza[redacted]'],
    ['secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY here', `secret ${REDACTED} here`],
    ['hex 0123456789abcdef0123456789abcdef01234567 here', `hex ${REDACTED} here`],
  ])('masks %s', (input, expected) => {
    expect(maskCredentials(input)).toContain(expected);
  });

  it('keeps ordinary words, paths, ids and model names', () => {
    for (const text of [
      'Basic authentication is not supported',
      'a normal sentence about sk- prefixes',
      'anthropic.claude-3-5-sonnet-20240620-v1:0',
      'request 7f0c2b8e-3c1d-4b7a-9b61-0d8a1f2e3c4d',
      '/api/admin/mcp-servers/12/tools/get_forecast',
      'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
    ]) {
      expect(maskCredentials(text)).toBe(text);
    }
  });
});

describe('the logger', () => {
  it('writes no registered secret, even inside an error message', () => {
    let text = '';
    const stream = new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    });
    registerSecret('logged-upstream-secret-2');
    const logger = createLogger({ service: 'edge', level: 'info', destination: stream });
    logger.warn({ err: new Error('401: logged-upstream-secret-2') }, 'upstream refused');
    expect(text).toContain('upstream refused');
    expect(text).not.toContain('logged-upstream-secret-2');
  });
});

describe('known secrets', () => {
  /** A deterministic source of randomness: the same texts on every run. */
  function randomOf(seed: number): () => number {
    let state = seed;
    return () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  }

  it('are removed by one scan, once there are many, as the search one by one removes them', () => {
    const random = randomOf(11);
    const pick = (alphabet: string, length: number) =>
      Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    // Some share their first characters (one is even the start of another), as keys of one
    // provider do; the longest of those must win.
    const targets = [
      'sk-proj-abcdefgh',
      'sk-proj-abcdefghijkl',
      'sk-proj-zyxwvuts-1',
      'AKIAEXAMPLEKEY01',
      'x7Qw9-secret-part',
    ];
    const decoys = Array.from({ length: 40 }, (_, i) =>
      i % 2 === 0 ? `sk-proj-${pick('ABCDEFGH0123', 12)}` : pick('ABCDEFGHJKLMN0123456789', 20),
    );
    const few = new KnownSecrets();
    const many = new KnownSecrets();
    for (const form of targets) {
      few.add(form);
      many.add(form);
    }
    for (const form of decoys) many.add(form);
    for (let i = 0; i < 400; i += 1) {
      let text = '';
      const parts = Math.floor(random() * 6);
      for (let part = 0; part < parts; part += 1) {
        text += pick(' abc:/"=\n', Math.floor(random() * 12));
        text += targets[Math.floor(random() * targets.length)];
      }
      text += pick(' abc:/"=', Math.floor(random() * 5));
      expect(many.removeFrom(text)).toBe(few.removeFrom(text));
      for (const target of targets) expect(many.removeFrom(text)).not.toContain(target);
    }
    expect(many.removeFrom('short')).toBe('short');
    expect(many.removeFrom('sk-proj-zyxwvuts-1')).toBe(REDACTED);
  });

  it('are thousands in an edge in front of relays, each removed from every line', () => {
    const secrets = Array.from({ length: 2_000 }, (_, i) => `relay-account-${i}-${i * 7919}`);
    for (const secret of secrets) registerSecret(secret);
    const quoted = `401 for ${secrets[0]}, then ${secrets[1_999]}:${secrets[1_000]}.`;
    expect(redactSecrets(quoted)).toBe(`401 for ${REDACTED}, then ${REDACTED}:${REDACTED}.`);
    expect(redactSecrets('relay-account-12 is not a key')).toBe('relay-account-12 is not a key');
  });
});
