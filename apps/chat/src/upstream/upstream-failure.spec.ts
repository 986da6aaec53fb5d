import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { classifyUpstreamError, describeFailure, isRetryable } from './upstream-failure.js';

const answered = (status: number | undefined, body: Record<string, unknown>) =>
  APIError.generate(status, { error: body }, undefined, new Headers());

describe('classifyUpstreamError', () => {
  it.each([
    [new APIConnectionTimeoutError(), 'timeout', true],
    [
      new APIConnectionError({ cause: new Error('connect ECONNREFUSED 127.0.0.1:9') }),
      'connection',
      true,
    ],
    [answered(503, { message: 'overloaded' }), 'saturated', true],
    [answered(429, { message: 'Rate limit reached' }), 'saturated', true],
    [answered(500, { message: 'x', code: 'no_available_channel' }), 'saturated', true],
    // An error event inside a stream: the SDK raises it without a status.
    [
      new APIError(
        undefined,
        { message: 'pool empty', code: 'no_available_channel' },
        undefined,
        undefined,
      ),
      'saturated',
      true,
    ],
    [new APIError(undefined, { message: 'upstream broke' }, undefined, undefined), 'failed', false],
    [answered(504, { message: 'slow' }), 'timeout', true],
    [answered(400, { message: 'bad model' }), 'rejected', false],
    [answered(401, { message: 'Incorrect API key provided' }), 'rejected', false],
    [answered(500, { message: 'boom' }), 'failed', false],
    [new TypeError('terminated'), 'connection', true],
    [new SyntaxError('Unexpected token'), 'failed', false],
    [new APIUserAbortError(), 'cancelled', false],
  ])('%s is %s', (error, kind, retryable) => {
    const failure = classifyUpstreamError(error);
    expect(failure.kind).toBe(kind);
    expect(isRetryable(failure)).toBe(retryable);
  });

  it('keeps the status and masks credentials the provider echoed', () => {
    const failure = classifyUpstreamError(
      answered(401, { message: 'Incorrect API key provided: sk-abcdefghijklmnop' }),
    );
    expect(failure.status).toBe(401);
    expect(failure.detail).not.toContain('abcdefghijklmnop');
  });
});

describe('describeFailure', () => {
  const address = 'https://relay.example.com';

  it('names the address for a failed request, so the user can report it', () => {
    const error = describeFailure({ kind: 'failed', status: 500, detail: 'boom' }, address, 5000);
    expect(error.code).toBe('upstream_failed');
    expect(error.message).toContain(address);
    expect(error.message).toContain('HTTP 500');
  });

  it('suggests retrying later when no channel is available', () => {
    const error = describeFailure({ kind: 'saturated', status: 503, detail: 'x' }, address, 5000);
    expect(error).toMatchObject({ code: 'no_available_channel' });
    expect(error.message).toMatch(/retry later/i);
  });

  it('says how long it waited on a timeout', () => {
    const error = describeFailure({ kind: 'timeout', detail: 'x' }, address, 120_000);
    expect(error).toMatchObject({ code: 'upstream_timeout' });
    expect(error.message).toContain('120 s');
  });
});
