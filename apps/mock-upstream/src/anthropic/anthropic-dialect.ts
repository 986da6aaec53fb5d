import { OPENAI_DIALECT, type Dialect } from '../openai/exchange.js';

// Anthropic's key header and error bodies (https://docs.anthropic.com/en/api/errors).

const BY_STATUS: Record<number, { type: string; message: string }> = {
  400: { type: 'invalid_request_error', message: 'Invalid request.' },
  401: { type: 'authentication_error', message: 'invalid x-api-key' },
  403: { type: 'permission_error', message: 'Your API key does not have permission.' },
  404: { type: 'not_found_error', message: 'Not found.' },
  413: { type: 'request_too_large', message: 'Request exceeds the maximum allowed size.' },
  429: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit.' },
  500: { type: 'api_error', message: 'Internal server error.' },
  529: { type: 'overloaded_error', message: 'Overloaded' },
};

export function anthropicError(status: number, overrides: { message?: string } = {}): unknown {
  const base = BY_STATUS[status] ?? { type: 'api_error', message: `Error ${status}.` };
  return {
    type: 'error',
    error: { type: base.type, message: overrides.message ?? base.message },
  };
}

/** The key comes as `x-api-key`, or as `Authorization: Bearer` (how the 1.x SDKs send it). */
export const ANTHROPIC_DIALECT: Dialect = {
  keyHeaders: ['x-api-key', 'authorization'],
  keyOf(request) {
    const key = request.headers['x-api-key'];
    if (typeof key === 'string' && key !== '') return key;
    return OPENAI_DIALECT.keyOf(request);
  },
  error: anthropicError,
};
