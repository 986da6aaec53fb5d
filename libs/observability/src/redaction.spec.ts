import { Writable } from 'node:stream';
import { createLogger } from './logger.js';
import {
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
