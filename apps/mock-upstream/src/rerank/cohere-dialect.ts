import { randomUUID } from 'node:crypto';
import { OPENAI_DIALECT, type Dialect } from '../openai/exchange.js';

// Cohere's error bodies (https://docs.cohere.com/reference/errors): `{id, message}`, the
// status saying the rest. Its key comes as `Authorization: Bearer`, like OpenAI's.

const MESSAGES: Record<number, string> = {
  400: 'invalid request',
  401: 'invalid api token',
  403: 'Forbidden',
  404: 'Not Found',
  429: 'too many requests',
  500: 'internal server error, this has been reported to our developers',
  503: 'Service Unavailable',
};

export function cohereError(status: number, overrides: { message?: string } = {}): unknown {
  return {
    id: randomUUID(),
    message: overrides.message ?? MESSAGES[status] ?? `Error ${status}.`,
  };
}

export const COHERE_DIALECT: Dialect = {
  keyHeaders: OPENAI_DIALECT.keyHeaders,
  keyOf: (request) => OPENAI_DIALECT.keyOf(request),
  error: cohereError,
};
