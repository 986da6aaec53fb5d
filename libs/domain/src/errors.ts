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
}

/** Errors of the OpenAI-compatible API (`/v1/*`): status and OpenAI error type per code. */
export const GATEWAY_ERRORS = {
  invalid_api_key: { status: 401, type: 'invalid_request_error' },
  token_disabled: { status: 401, type: 'invalid_request_error' },
  token_expired: { status: 401, type: 'invalid_request_error' },
  model_not_allowed: { status: 403, type: 'invalid_request_error' },
  model_not_priced: { status: 403, type: 'invalid_request_error' },
  ip_not_allowed: { status: 403, type: 'invalid_request_error' },
  insufficient_quota: { status: 429, type: 'insufficient_quota' },
  rate_limit_exceeded: { status: 429, type: 'requests' },
  invalid_json: { status: 400, type: 'invalid_request_error' },
  invalid_request: { status: 400, type: 'invalid_request_error' },
  /** A field the channel serving the model cannot honour (OpenAI's own code for it). */
  unsupported_parameter: { status: 400, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  request_too_large: { status: 413, type: 'invalid_request_error' },
  unknown_url: { status: 404, type: 'invalid_request_error' },
  model_not_found: { status: 404, type: 'invalid_request_error' },
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
  /** Stored on a reply the browser stopped waiting for; never sent as a response. */
  request_cancelled: 499,
} as const satisfies Record<string, number>;

export type ApiErrorCode = keyof typeof API_ERRORS;

export interface ApiErrorOptions {
  /** Whole seconds after which the client may try again, sent as `Retry-After` (429, 503). */
  retryAfterSeconds?: number;
}

/** Thrown by services; each app's exception filter turns it into the public error body. */
export class ApiError extends Error {
  readonly status: number;
  readonly retryAfterSeconds?: number;
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
  }

  toBody(): ApiErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.fields ? { fields: this.fields } : {}),
      },
    };
  }
}

/** Thrown on the gateway's `/v1/*` path; rendered in OpenAI's error shape. */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: string;
  constructor(
    readonly code: GatewayErrorCode,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'GatewayError';
    this.status = GATEWAY_ERRORS[code].status;
    this.type = GATEWAY_ERRORS[code].type;
  }

  toBody(): OpenAIErrorBody {
    return {
      error: { message: this.message, type: this.type, param: this.param, code: this.code },
    };
  }
}
