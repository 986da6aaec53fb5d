import { type Dialect } from '../openai/exchange.js';

// Google's key header and error bodies (https://ai.google.dev/gemini-api/docs/troubleshooting,
// https://cloud.google.com/apis/design/errors): `{error: {code, message, status, details}}`.

const BY_STATUS: Record<number, { status: string; message: string }> = {
  400: { status: 'INVALID_ARGUMENT', message: 'Request contains an invalid argument.' },
  403: {
    status: 'PERMISSION_DENIED',
    message: 'Permission denied: Consumer has been suspended.',
  },
  404: { status: 'NOT_FOUND', message: 'Requested entity was not found.' },
  429: {
    status: 'RESOURCE_EXHAUSTED',
    message: 'Resource has been exhausted (e.g. check quota).',
  },
  500: { status: 'INTERNAL', message: 'An internal error has occurred.' },
  503: { status: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' },
};

export function geminiError(
  status: number,
  overrides: { code?: string; message?: string } = {},
): unknown {
  // Google refuses a key it does not know with a 400, the reason in the details.
  if (overrides.code === 'invalid_api_key') {
    return {
      error: {
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'API_KEY_INVALID',
            domain: 'googleapis.com',
            metadata: { service: 'generativelanguage.googleapis.com' },
          },
        ],
      },
    };
  }
  const base = BY_STATUS[status] ?? { status: 'UNKNOWN', message: `Error ${status}.` };
  return {
    error: { code: status, message: overrides.message ?? base.message, status: base.status },
  };
}

/** The key comes as `x-goog-api-key`, or as the `key` query parameter. */
export const GEMINI_DIALECT: Dialect = {
  keyHeaders: ['x-goog-api-key'],
  keyOf(request) {
    const header = request.headers['x-goog-api-key'];
    if (typeof header === 'string' && header !== '') return header;
    const key = (request.query as { key?: unknown } | undefined)?.key;
    return typeof key === 'string' && key !== '' ? key : undefined;
  },
  error: geminiError,
  refusals: { unknownKey: 400, bannedKey: 403 },
};
