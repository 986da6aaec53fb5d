import type { OpenAIErrorBody } from '@switchyard/contracts';

interface ProviderError {
  type: string;
  code: string | null;
  message: string;
}

const BY_STATUS: Record<number, ProviderError> = {
  400: { type: 'invalid_request_error', code: 'invalid_request', message: 'Invalid request.' },
  401: {
    type: 'invalid_request_error',
    code: 'invalid_api_key',
    message: 'Incorrect API key provided.',
  },
  403: {
    type: 'invalid_request_error',
    code: 'account_deactivated',
    message: 'This account has been deactivated.',
  },
  404: { type: 'invalid_request_error', code: 'unknown_url', message: 'Unknown URL.' },
  429: {
    type: 'requests',
    code: 'rate_limit_exceeded',
    message: 'Rate limit reached. Please try again later.',
  },
  500: {
    type: 'server_error',
    code: null,
    message: 'The server had an error while processing your request.',
  },
  503: {
    type: 'server_error',
    code: null,
    message: 'The engine is currently overloaded, please try again later.',
  },
};

/** The error bodies real providers send, by status. */
export function providerError(
  status: number,
  overrides: Partial<ProviderError> = {},
): OpenAIErrorBody {
  const base = BY_STATUS[status] ?? {
    type: 'server_error',
    code: null,
    message: `Error ${status}.`,
  };
  const { type, code, message } = { ...base, ...overrides };
  return { error: { message, type, param: null, code } };
}
