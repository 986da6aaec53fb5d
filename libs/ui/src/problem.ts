// A failure from an API answering `{"error": {"code", "message", "fields"?, "address"?}}`,
// as both apps show it: the one shape every failure in the browser takes, whether the API,
// the network or the page itself failed.

export interface FieldProblem {
  field: string;
  message: string;
}

export interface Problem {
  /** The HTTP status; 0 when no answer came, absent for a failure in the page. */
  status?: number;
  code: string;
  message: string;
  fields?: FieldProblem[];
  /** The upstream provider's address, for `upstream_failed` (docs/specification.md, "Errors"). */
  address?: string;
  /** Figures to show beside the message (a balance and a price, say). */
  details?: Record<string, number | string>;
}

/**
 * A problem to throw: an `Error` (so the console shows where it was thrown) that is also a
 * `Problem`, which `asProblem` reads back as it is.
 */
export function problem(shape: Problem): Error & Problem {
  return Object.assign(new Error(shape.message), { name: 'Problem' }, shape);
}

/** Anything thrown, as a problem to show. */
export function asProblem(error: unknown): Problem {
  if (typeof error === 'object' && error !== null && 'code' in error && 'message' in error) {
    const candidate = error as Partial<Problem>;
    if (typeof candidate.code === 'string' && typeof candidate.message === 'string') {
      return candidate as Problem;
    }
  }
  return { code: 'client_error', message: error instanceof Error ? error.message : String(error) };
}

/** The first message for each field the API named, to show beside that field. */
export function fieldErrors(error: unknown): Record<string, string> {
  if (error === null || error === undefined) return {};
  const byField: Record<string, string> = {};
  for (const { field, message } of asProblem(error).fields ?? []) byField[field] ??= message;
  return byField;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An `{"error": {...}}` body, or the `{...}` inside it (a streamed error event's data), as
 * a problem. A body without a code (a proxy's page, nothing at all) says `fallback`; a 502
 * without one is still `bad_gateway`, so the app can say which service is not reachable.
 */
export function problemFrom(status: number, body: unknown, fallback: string): Error & Problem {
  const error = isRecord(body) && isRecord(body['error']) ? body['error'] : body;
  if (isRecord(error) && typeof error['code'] === 'string') {
    const fields = Array.isArray(error['fields'])
      ? error['fields'].filter(
          (f): f is FieldProblem =>
            isRecord(f) && typeof f['field'] === 'string' && typeof f['message'] === 'string',
        )
      : undefined;
    const address = typeof error['address'] === 'string' ? error['address'] : undefined;
    const details = isRecord(error['details'])
      ? Object.fromEntries(
          Object.entries(error['details']).filter(
            (entry): entry is [string, number | string] =>
              typeof entry[1] === 'number' || typeof entry[1] === 'string',
          ),
        )
      : undefined;
    return problem({
      status,
      code: error['code'],
      message: typeof error['message'] === 'string' ? error['message'] : fallback,
      ...(fields ? { fields } : {}),
      ...(address ? { address } : {}),
      ...(details ? { details } : {}),
    });
  }
  return problem({
    status,
    code: status === 502 ? 'bad_gateway' : `http_${status}`,
    message: fallback,
  });
}

/** A request that got no answer at all; `message` replaces the browser's own words. */
export function networkProblem(error: unknown, message?: string): Error & Problem {
  return problem({
    status: 0,
    code: 'network_error',
    message: message ?? (error instanceof Error ? error.message : 'The request could not be sent'),
  });
}
