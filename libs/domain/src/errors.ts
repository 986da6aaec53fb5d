// Stable error codes: the public contract of every failure. Clients match on `code`,
// never on the message.

/** OpenAI-shaped error body, used on every `/v1/*` failure. */
export interface OpenAIErrorBody {
  error: {
    message: string;
    type: string;
    param: string | null;
    code: string | null;
  };
}

interface ErrorDefinition {
  status: number;
  type: string;
  /**
   * False where retrying cannot succeed: the answer then carries `x-should-retry: false`,
   * which the openai and anthropic SDKs obey instead of retrying a 429 or 5xx on their own.
   */
  retryable?: false;
}

/** Errors of the OpenAI-compatible API (`/v1/*`): status and OpenAI error type per code. */
export const GATEWAY_ERRORS = {
  invalid_api_key: { status: 401, type: 'invalid_request_error' },
  token_disabled: { status: 401, type: 'invalid_request_error' },
  token_expired: { status: 401, type: 'invalid_request_error' },
  model_not_allowed: { status: 403, type: 'invalid_request_error' },
  model_not_priced: { status: 403, type: 'invalid_request_error' },
  ip_not_allowed: { status: 403, type: 'invalid_request_error' },
  insufficient_quota: { status: 429, type: 'insufficient_quota', retryable: false },
  /** A token, member, team or gateway budget is spent for this period: retry once it resets. */
  budget_exceeded: { status: 429, type: 'insufficient_quota' },
  rate_limit_exceeded: { status: 429, type: 'requests' },
  invalid_json: { status: 400, type: 'invalid_request_error' },
  invalid_request: { status: 400, type: 'invalid_request_error' },
  /** A field the channel serving the model cannot honour (OpenAI's own code for it). */
  unsupported_parameter: { status: 400, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  request_too_large: { status: 413, type: 'invalid_request_error' },
  unknown_url: { status: 404, type: 'invalid_request_error' },
  model_not_found: { status: 404, type: 'invalid_request_error' },
  /** A stored Response this token did not create, or whose record has expired. */
  response_not_found: { status: 404, type: 'invalid_request_error' },
  /** A stored Response whose channel or upstream key has since been removed. */
  response_gone: { status: 410, type: 'invalid_request_error' },
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  no_available_channel: { status: 503, type: 'server_error' },
  upstream_error: { status: 502, type: 'upstream_error' },
  upstream_timeout: { status: 504, type: 'upstream_error' },
  stream_interrupted: { status: 502, type: 'upstream_error' },
  service_unavailable: { status: 503, type: 'server_error' },
  internal_error: { status: 500, type: 'server_error' },
} as const satisfies Record<string, ErrorDefinition>;

export type GatewayErrorCode = keyof typeof GATEWAY_ERRORS;

/** Body of every failure of the admin and chat APIs. */
export interface ApiErrorBody {
  error: {
    code: string;
    message: string;
    /** Validation failures: each bad field and what is wrong with it. */
    fields?: { field: string; message: string }[];
    /** Figures the client shows beside the message (a balance and a price, say). */
    details?: Record<string, number | string>;
  };
}

/** Errors of the admin API (`/api/*` on the gateway) and the chat API. */
export const API_ERRORS = {
  validation_failed: 400,
  invalid_json: 400,
  unauthenticated: 401,
  invalid_credentials: 401,
  password_change_required: 403,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  version_conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_attempts: 429,
  internal_error: 500,
  bad_gateway: 502,
  service_unavailable: 503,
  // Chat application (docs/specification.md, "Errors").
  model_not_permitted: 403,
  address_not_whitelisted: 403,
  license_invalid: 400,
  upstream_failed: 502,
  upstream_timeout: 504,
  no_available_channel: 503,
  no_api_key: 503,
  user_disabled: 403,
  username_taken: 409,
  email_taken: 409,
  invalid_assistant_link: 400,
  /** Images attached to a message (docs/specification.md, "Images"). */
  image_type_not_supported: 415,
  image_too_large: 413,
  too_many_images: 400,
  model_cannot_see_images: 400,
  /** A reply stopped because the model kept calling tools (docs/tools.md). */
  tool_step_limit: 508,
  /** Chat credits (docs/credits.md, "Errors"). */
  insufficient_credits: 402,
  code_not_redeemable: 400,
  balance_below_zero: 409,
  /** Team redemption codes (docs/teams.md, "Redemption codes"). */
  code_used: 409,
  code_expired: 410,
  /** A team that still has tokens cannot be deleted. */
  team_has_tokens: 409,
  /** Stored on a reply the browser stopped waiting for; never sent as a response. */
  request_cancelled: 499,
} as const satisfies Record<string, number>;

export type ApiErrorCode = keyof typeof API_ERRORS;

export interface ApiErrorOptions {
  /** Whole seconds after which the client may try again, sent as `Retry-After` (429, 503). */
  retryAfterSeconds?: number;
  /** Sent as the body's `details`. */
  details?: Record<string, number | string>;
}

/** Thrown by services; each app's exception filter turns it into the public error body. */
export class ApiError extends Error {
  readonly status: number;
  readonly retryAfterSeconds?: number;
  readonly details?: Record<string, number | string>;
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly fields?: { field: string; message: string }[],
    options: ApiErrorOptions = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = API_ERRORS[code];
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.details = options.details;
  }

  toBody(): ApiErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.fields ? { fields: this.fields } : {}),
        ...(this.details ? { details: this.details } : {}),
      },
    };
  }
}

/** A rate limit the gateway itself enforced, told in OpenAI's `x-ratelimit-*` headers. */
export interface RateLimitState {
  /** Requests per minute allowed. */
  limitRequests: number;
  remainingRequests: number;
  /** Milliseconds until a request is allowed again. */
  resetMs: number;
}

export interface GatewayErrorOptions {
  /** How long a retry should wait: sent as `Retry-After` (seconds) and `retry-after-ms`. */
  retryAfterMs?: number;
  rateLimit?: RateLimitState;
}

/** OpenAI's duration format of `x-ratelimit-reset-*`: `1s`, `6m0s`, `1h2m3s`, `250ms`. */
export function rateLimitDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const total = Math.ceil(ms / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}

/** Thrown on the gateway's `/v1/*` path; rendered in OpenAI's error shape. */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  constructor(
    readonly code: GatewayErrorCode,
    message: string,
    readonly param: string | null = null,
    readonly options: GatewayErrorOptions = {},
  ) {
    super(message);
    this.name = 'GatewayError';
    this.status = GATEWAY_ERRORS[code].status;
    this.type = GATEWAY_ERRORS[code].type;
  }

  /**
   * The headers a client's retry logic reads, whatever the body's shape: whether to retry
   * at all, after how long, and the rate limit that refused it.
   */
  headers(): Record<string, string> {
    const headers: Record<string, string> = {};
    const definition: ErrorDefinition = GATEWAY_ERRORS[this.code];
    if (definition.retryable === false) headers['x-should-retry'] = 'false';
    const { retryAfterMs, rateLimit } = this.options;
    if (retryAfterMs !== undefined) {
      headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
      headers['retry-after-ms'] = String(Math.max(0, Math.ceil(retryAfterMs)));
    }
    if (rateLimit) {
      headers['x-ratelimit-limit-requests'] = String(rateLimit.limitRequests);
      headers['x-ratelimit-remaining-requests'] = String(rateLimit.remainingRequests);
      headers['x-ratelimit-reset-requests'] = rateLimitDuration(rateLimit.resetMs);
    }
    return headers;
  }

  toBody(): OpenAIErrorBody {
    return {
      error: { message: this.message, type: this.type, param: this.param, code: this.code },
    };
  }
}
