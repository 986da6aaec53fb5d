import { OPENAI_DIALECT, type Dialect } from '../openai/exchange.js';

// Azure OpenAI's key header and error bodies
// (https://learn.microsoft.com/azure/ai-foundry/openai/reference): its own gateway answers
// `{error: {code, message}}` with the status as the code; the model's refusals keep
// OpenAI's shape.

const BY_STATUS: Record<number, { code: string; message: string }> = {
  401: {
    code: '401',
    message:
      'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
  },
  403: { code: '403', message: 'Access denied due to Virtual Network/Firewall rules.' },
  404: {
    code: 'DeploymentNotFound',
    message:
      'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
  },
  429: {
    code: '429',
    message:
      'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded call rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second.',
  },
  500: { code: 'InternalServerError', message: 'The server had an error processing your request.' },
};

export function azureError(status: number, overrides: { message?: string } = {}): unknown {
  if (status === 400) {
    return {
      error: {
        message: overrides.message ?? 'Invalid request.',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    };
  }
  const base = BY_STATUS[status] ?? { code: String(status), message: `Error ${status}.` };
  // The gateway's own refusals have fixed words; only the mock's rate limit says more.
  return {
    error: {
      code: base.code,
      message: status === 429 ? (overrides.message ?? base.message) : base.message,
    },
  };
}

/** The key comes as `api-key`, or as `Authorization: Bearer` (a Microsoft Entra token). */
export const AZURE_DIALECT: Dialect = {
  keyHeaders: ['api-key', 'authorization'],
  keyOf(request) {
    const key = request.headers['api-key'];
    if (typeof key === 'string' && key !== '') return key;
    return OPENAI_DIALECT.keyOf(request);
  },
  error: azureError,
};
