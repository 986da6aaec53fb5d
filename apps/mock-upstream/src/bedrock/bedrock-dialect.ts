import { type Dialect } from '../openai/exchange.js';

// AWS's error bodies for Bedrock (https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html):
// `{message}`, with the error's name in the `x-amzn-errortype` header where the mock can set it.

const BY_STATUS: Record<number, { code: string; message: string }> = {
  400: {
    code: 'ValidationException',
    message: 'Malformed input request, please reformat your input and try again.',
  },
  403: {
    code: 'AccessDeniedException',
    message: 'You don\u2019t have access to the model with the specified model ID.',
  },
  404: { code: 'ResourceNotFoundException', message: 'The specified resource was not found.' },
  424: { code: 'ModelErrorException', message: 'The model failed to process the request.' },
  429: {
    code: 'ThrottlingException',
    message: 'Too many requests, please wait before trying again.',
  },
  500: { code: 'InternalServerException', message: 'The server encountered an internal error.' },
  503: {
    code: 'ServiceUnavailableException',
    message: 'Bedrock is unable to process your request.',
  },
};

export function bedrockErrorName(status: number): string {
  return BY_STATUS[status]?.code ?? 'InternalServerException';
}

export function bedrockError(
  status: number,
  overrides: { code?: string; message?: string } = {},
): unknown {
  const base = BY_STATUS[status] ?? { message: `Error ${status}.` };
  // The pool's own refusal of a deactivated account reads as AWS's.
  if (overrides.code === 'account_deactivated')
    return { message: 'User is not authorized to perform: bedrock:InvokeModel' };
  return { message: overrides.message ?? base.message };
}

/** The dialect for one request whose signature named (and proved) the account's key. */
export function bedrockDialect(key: string): Dialect {
  return {
    keyHeaders: ['authorization', 'x-amz-security-token'],
    keyOf: () => key,
    error: bedrockError,
    errorHeaders: (status, overrides) => ({
      'x-amzn-errortype':
        overrides?.code === 'account_deactivated'
          ? 'AccessDeniedException'
          : bedrockErrorName(status),
    }),
    refusals: { unknownKey: 403, bannedKey: 403 },
  };
}
