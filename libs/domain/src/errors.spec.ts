import { ApiError, GATEWAY_ERRORS, GatewayError } from './errors.js';

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
