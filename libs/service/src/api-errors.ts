import {
  ArgumentsHost,
  Catch,
  HttpException,
  Logger,
  ValidationPipe,
  type ArgumentMetadata,
  type ExceptionFilter,
  type ValidationError,
} from '@nestjs/common';
import { ApiError, bodyTooLargeMessage, type ApiErrorCode } from '@switchyard/contracts';
import { getMetadataStorage } from 'class-validator';
import { type FastifyReply } from 'fastify';
import { unstorableText } from './json-body.js';

// The error conventions of the admin and chat APIs: every failure is
// `{"error": {"code", "message", "fields"?}}` with a stable code and the right status.

const STATUS_CODES: Record<number, ApiErrorCode> = {
  400: 'validation_failed',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'too_many_attempts',
  502: 'bad_gateway',
  503: 'service_unavailable',
};

/** A request the framework refused before any handler ran, in words a client can act on. */
export interface RefusedRequest {
  kind:
    | 'invalid_json'
    | 'payload_too_large'
    | 'unsupported_media_type'
    | 'not_found'
    | 'validation_failed';
  status: number;
  message: string;
}

interface FrameworkError {
  code?: string;
  statusCode?: number;
  message: string;
}

/** Recognises Fastify's body-parsing refusals (which Nest wraps) and unknown routes. */
export function refusedRequest(exception: unknown): RefusedRequest | null {
  const framework = (exception instanceof HttpException ? exception.cause : exception) as
    FrameworkError | undefined;
  switch (framework?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        kind: 'payload_too_large',
        status: 413,
        message: bodyTooLargeMessage(),
      };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return {
        kind: 'unsupported_media_type',
        status: 415,
        message: 'The request body must be application/json',
      };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return {
        kind: 'invalid_json',
        status: 400,
        message: 'The request body is empty; a JSON object is expected',
      };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { kind: 'invalid_json', status: 400, message: 'The request body is not valid JSON' };
    case 'FST_ERR_BAD_URL':
      return {
        kind: 'validation_failed',
        status: 400,
        message: 'The request URL is not valid: a percent-encoded part of it does not decode',
      };
  }
  if (exception instanceof SyntaxError) {
    return {
      kind: 'invalid_json',
      status: 400,
      message: `The request body is not valid JSON: ${exception.message}`,
    };
  }
  if (exception instanceof HttpException && exception.getStatus() === 404) {
    return { kind: 'not_found', status: 404, message: exception.message };
  }
  return null;
}

export function toApiError(exception: unknown): ApiError {
  if (exception instanceof ApiError) return exception;
  const refused = refusedRequest(exception);
  if (refused) return new ApiError(refused.kind, refused.message);
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    return new ApiError(
      STATUS_CODES[status] ?? (status >= 500 ? 'internal_error' : 'validation_failed'),
      exception.message,
    );
  }
  return new ApiError('internal_error', 'An unexpected error occurred; it has been logged');
}

@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('ApiExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const error = toApiError(exception);
    if (error.status >= 500 && error.code === 'internal_error') {
      this.logger.error(exception instanceof Error ? exception : String(exception));
    }
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    if (error.retryAfterSeconds !== undefined) {
      void reply.header('retry-after', String(Math.max(0, Math.ceil(error.retryAfterSeconds))));
    }
    reply.status(error.status).send(error.toBody());
  }
}

function flatten(errors: ValidationError[], parent = ''): { field: string; message: string }[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/** The largest value of a Postgres `integer` column (ids, versions): larger is a 400, not a 500. */
export const INT4_MAX = 2_147_483_647;

/** At most this many fields are named in one answer (a body can have thousands wrong). */
const MAX_NAMED_FIELDS = 20;

function validationFailed(fields: { field: string; message: string }[]): ApiError {
  const named = fields.slice(0, MAX_NAMED_FIELDS);
  const names = [...new Set(named.map((f) => f.field))];
  const more = fields.length > named.length ? ` and ${fields.length - named.length} more` : '';
  return new ApiError('validation_failed', `Invalid ${names.join(', ')}${more}`, named);
}

const knownProperties = new WeakMap<object, Set<string>>();

/** The properties a DTO class declares rules for (what `whitelist` keeps). */
function propertiesOf(dto: new (...args: never[]) => unknown): Set<string> {
  let known = knownProperties.get(dto);
  if (!known) {
    const rules = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
    known = new Set(rules.map((rule) => rule.propertyName));
    knownProperties.set(dto, known);
  }
  return known;
}

const PRIMITIVES = new Set<unknown>([String, Boolean, Number, Array, Object, undefined]);

/**
 * The checks that cost one pass over the top-level keys, made before class-transformer
 * and class-validator do per-element work: a DTO body is an object, has not many keys its
 * class does not declare, and no query or path text Postgres could not store.
 */
function precheck(value: unknown, metadata: ArgumentMetadata): void {
  if (metadata.type === 'param' || metadata.type === 'query') {
    const entries =
      typeof value === 'string'
        ? [[metadata.data ?? metadata.type, value] as const]
        : typeof value === 'object' && value !== null
          ? Object.entries(value)
          : [];
    for (const [name, text] of entries) {
      const problem = typeof text === 'string' ? unstorableText(text) : null;
      if (problem) throw validationFailed([{ field: name, message: `${name} ${problem}` }]);
    }
  }
  const dto = metadata.metatype;
  if (metadata.type === 'custom' || PRIMITIVES.has(dto) || typeof dto !== 'function') return;
  // No body at all is validated as `{}` below: required fields are named, optional bodies
  // (`POST /api/channels/:id/disable`) pass.
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const field = metadata.type === 'body' ? 'body' : metadata.type;
    throw validationFailed([{ field, message: `${field} must be a JSON object` }]);
  }
  // A few unknown keys are reported with the other faults by the validator below; many
  // are refused here, before the validator builds an error for each.
  const known = propertiesOf(dto as new () => unknown);
  const unknown = Object.keys(value).filter((key) => !known.has(key));
  if (unknown.length > MAX_NAMED_FIELDS) {
    throw validationFailed(
      unknown.map((field) => ({ field, message: `property ${field} should not exist` })),
    );
  }
}

class ApiValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    precheck(value, metadata);
    return super.transform(value, metadata);
  }
}

/** Validates bodies and queries against their DTOs: unknown fields are refused, each bad field named. */
export function apiValidationPipe(): ValidationPipe {
  return new ApiValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) => validationFailed(flatten(errors)),
  });
}
