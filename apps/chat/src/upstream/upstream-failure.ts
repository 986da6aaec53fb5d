import { type ApiErrorCode } from '@switchyard/contracts';
import { redactSecrets } from '@switchyard/observability';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';

// What went wrong with one call to an upstream, in the terms of docs/specification.md
// ("Errors"), and whether the next API key record may be tried for the same request.

export type FailureKind =
  /** No answer in time. */
  | 'timeout'
  /** The address could not be reached, or the connection broke. */
  | 'connection'
  /** No available channel, saturated, or rate limited. */
  | 'saturated'
  /** The upstream refused the request itself (4xx): another record would refuse it too. */
  | 'rejected'
  /** The upstream failed in another way (5xx, broken answer). */
  | 'failed'
  /** We stopped waiting: the browser went away. */
  | 'cancelled';

export interface UpstreamFailure {
  kind: FailureKind;
  /** The upstream's HTTP status, when it answered with one. */
  status?: number;
  /** The upstream's own words, credentials masked, shortened. */
  detail: string;
}

const RETRYABLE: ReadonlySet<FailureKind> = new Set(['timeout', 'connection', 'saturated']);

/** Whether the next record may be tried (only while nothing has reached the browser). */
export function isRetryable(failure: UpstreamFailure): boolean {
  return RETRYABLE.has(failure.kind);
}

function tidy(text: string): string {
  // API key records' keys are registered when opened (record-rotation.ts).
  const clean = redactSecrets(text).replace(/\s+/g, ' ').trim();
  return clean.length > 300 ? `${clean.slice(0, 297)}...` : clean;
}

/**
 * Errors from fetch come from Node's own realm; under a test runner's sandbox they fail
 * `instanceof Error`, so errors are recognised by their shape.
 */
function isErrorLike(value: unknown): value is Error {
  return (
    value instanceof Error ||
    (typeof value === 'object' &&
      value !== null &&
      typeof (value as { message?: unknown }).message === 'string' &&
      typeof (value as { name?: unknown }).name === 'string')
  );
}

function causeOf(error: Error): string {
  const cause = (error as { cause?: unknown }).cause;
  if (isErrorLike(cause)) {
    const code = (cause as { code?: unknown }).code;
    const inner = causeOf(cause);
    return typeof code === 'string' && !inner.includes(code) ? `${code}: ${inner}` : inner;
  }
  return error.message;
}

export function classifyUpstreamError(error: unknown): UpstreamFailure {
  if (error instanceof APIUserAbortError) return { kind: 'cancelled', detail: 'aborted' };
  if (error instanceof APIConnectionTimeoutError) {
    return { kind: 'timeout', detail: 'no response in time' };
  }
  if (error instanceof APIConnectionError) {
    return { kind: 'connection', detail: tidy(causeOf(error)) };
  }
  if (error instanceof APIError) {
    // `instanceof` narrows to APIError<any>: the assertion restores the declared status type.
    const status = (error as APIError).status;
    const detail = tidy(error.message);
    const withStatus = status === undefined ? {} : { status };
    if (error.code === 'no_available_channel' || status === 503 || status === 429) {
      return { kind: 'saturated', ...withStatus, detail };
    }
    if (status === 504 || error.code === 'upstream_timeout') {
      return { kind: 'timeout', ...withStatus, detail };
    }
    if (status !== undefined && status >= 400 && status < 500) {
      return { kind: 'rejected', status, detail };
    }
    return { kind: 'failed', ...withStatus, detail };
  }
  if (isErrorLike(error) && error.name === 'SyntaxError') {
    return { kind: 'failed', detail: tidy(`unreadable answer: ${error.message}`) };
  }
  if (isErrorLike(error)) {
    // A stream cut half-way surfaces from fetch as a plain error ("terminated").
    return { kind: 'connection', detail: tidy(causeOf(error)) };
  }
  return { kind: 'failed', detail: tidy(String(error)) };
}

export interface UserFacingError {
  code: ApiErrorCode;
  message: string;
}

/**
 * The error the user sees for a failure at `address` (docs/specification.md, "Errors": each
 * with its remedy).
 */
export function describeFailure(
  failure: UpstreamFailure,
  address: string,
  timeoutMs: number,
): UserFacingError {
  const what =
    failure.status === undefined ? failure.detail : `HTTP ${failure.status}: ${failure.detail}`;
  switch (failure.kind) {
    case 'timeout':
      return {
        code: 'upstream_timeout',
        message:
          `The upstream API at ${address} did not answer within ${Math.round(timeoutMs / 1000)} s. ` +
          'The relay may be slow or overloaded, or the network may block it: check the firewall ' +
          'and tell the provider.',
      };
    case 'saturated':
      return {
        code: 'no_available_channel',
        message:
          `The upstream API at ${address} has no available channel or is saturated (${what}). ` +
          'Retry later; an administrator can add more API keys for round-robin.',
      };
    case 'cancelled':
      return {
        code: 'request_cancelled',
        message: 'The request was cancelled before the reply ended.',
      };
    case 'connection':
    case 'rejected':
    case 'failed':
      return {
        code: 'upstream_failed',
        message:
          `The request to the upstream API at ${address} failed (${what}). ` +
          `Please report it to the provider of ${address}.`,
      };
  }
}
