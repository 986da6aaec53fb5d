import { ApiError, GATEWAY_ERRORS, GatewayError, rateLimitDuration } from './errors.js';

describe('error contracts', () => {
  it("renders gateway errors in OpenAI's shape with the status of their code", () => {
    const error = new GatewayError('model_not_allowed', 'no', 'model');
    expect(error.status).toBe(403);
    expect(error.toBody()).toEqual({
      error: {
        message: 'no',
        type: 'invalid_request_error',
        param: 'model',
        code: 'model_not_allowed',
      },
    });
    expect(GATEWAY_ERRORS.no_available_channel.status).toBe(503);
    expect(GATEWAY_ERRORS.insufficient_quota.status).toBe(429);
  });

  it('tells SDKs not to retry what cannot succeed, and when to retry what can', () => {
    expect(new GatewayError('insufficient_quota', 'spent').headers()).toEqual({
      'x-should-retry': 'false',
    });
    expect(new GatewayError('upstream_error', 'failed').headers()).toEqual({});
    expect(
      new GatewayError('rate_limit_exceeded', 'slow down', null, {
        retryAfterMs: 12_300,
        rateLimit: { limitRequests: 60, remainingRequests: 0, resetMs: 12_300 },
      }).headers(),
    ).toEqual({
      'retry-after': '13',
      'retry-after-ms': '12300',
      'x-ratelimit-limit-requests': '60',
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '13s',
    });
  });

  it("writes durations as OpenAI's rate-limit headers do", () => {
    expect([250, 1000, 61_000, 3_723_000].map(rateLimitDuration)).toEqual([
      '250ms',
      '1s',
      '1m1s',
      '1h2m3s',
    ]);
  });

  it('renders API errors with their fields', () => {
    const error = new ApiError('validation_failed', 'Invalid name', [
      { field: 'name', message: 'name must be a string' },
    ]);
    expect(error.status).toBe(400);
    expect(error.toBody()).toEqual({
      error: {
        code: 'validation_failed',
        message: 'Invalid name',
        fields: [{ field: 'name', message: 'name must be a string' }],
      },
    });
    expect(new ApiError('not_found', 'x').toBody()).toEqual({
      error: { code: 'not_found', message: 'x' },
    });
  });

  it('carries the seconds to wait outside the body, only when given', () => {
    const refused = new ApiError('too_many_attempts', 'wait', undefined, { retryAfterSeconds: 30 });
    expect(refused.status).toBe(429);
    expect(refused.retryAfterSeconds).toBe(30);
    expect(refused.toBody()).toEqual({ error: { code: 'too_many_attempts', message: 'wait' } });
    expect(new ApiError('too_many_attempts', 'wait').retryAfterSeconds).toBeUndefined();
  });
});
