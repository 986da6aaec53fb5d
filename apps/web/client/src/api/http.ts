import createClient, { type Middleware } from 'openapi-fetch';
import { type paths } from '../generated/chat-api.js';

// One way to call the chat API: typed from its OpenAPI document (src/generated, built by
// scripts/generate-api-types.mjs, so a path, parameter or field the API does not have is a
// type error), the session token as a bearer credential, every failure turned into an
// ApiProblem with the API's stable code.

const TOKEN_KEY = 'switchyard.chat.token';

export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields?: { field: string; message: string }[],
    /** The upstream provider's address, for `upstream_failed` (docs/specification.md, "Errors"). */
    readonly address?: string,
  ) {
    super(message);
    this.name = 'ApiProblem';
  }
}

export const session = {
  token(): string | null {
    try {
      return localStorage.getItem(TOKEN_KEY);
    } catch {
      return null;
    }
  },
  save(token: string): void {
    localStorage.setItem(TOKEN_KEY, token);
  },
  clear(): void {
    localStorage.removeItem(TOKEN_KEY);
  },
};

let onUnauthenticated: () => void = () => undefined;
let origin = '';

/** Where the API is: the page's own origin unless set (tests run outside a page). */
export function apiUrl(path: string): string {
  return `${origin}/api${path}`;
}

export function setApiOrigin(url: string): void {
  origin = url.replace(/\/+$/, '');
  api = typedClient();
}

/** Called when the API says the session is gone (expired, logged out elsewhere). */
export function whenUnauthenticated(handler: () => void): void {
  onUnauthenticated = handler;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An `{"error": {...}}` body (or an SSE error event's data) as an ApiProblem. */
export function problemFrom(status: number, body: unknown, fallback: string): ApiProblem {
  const error = isRecord(body) && isRecord(body['error']) ? body['error'] : body;
  if (isRecord(error) && typeof error['code'] === 'string') {
    const fields = Array.isArray(error['fields'])
      ? error['fields'].filter(
          (f): f is { field: string; message: string } =>
            isRecord(f) && typeof f['field'] === 'string' && typeof f['message'] === 'string',
        )
      : undefined;
    const address = typeof error['address'] === 'string' ? error['address'] : undefined;
    const message = typeof error['message'] === 'string' ? error['message'] : fallback;
    return new ApiProblem(status, error['code'], message, fields, address);
  }
  if (status === 502) return new ApiProblem(502, 'bad_gateway', fallback);
  return new ApiProblem(status, 'http_error', fallback);
}

export function headers(json: boolean, accept = 'application/json'): Record<string, string> {
  const token = session.token();
  return {
    accept,
    ...(json ? { 'content-type': 'application/json' } : {}),
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

/** Reads a failed response into an ApiProblem (and signs out on 401). */
export async function failure(response: Response): Promise<ApiProblem> {
  const text = await response.text().catch(() => '');
  const body = parseJson(text);
  const problem = problemFrom(
    response.status,
    body,
    `The server answered ${response.status} ${response.statusText}`.trim(),
  );
  if (response.status === 401 && problem.code !== 'invalid_credentials') onUnauthenticated();
  return problem;
}

export function networkProblem(error: unknown): ApiProblem {
  return new ApiProblem(
    0,
    'network_error',
    error instanceof Error ? error.message : 'The request could not be sent',
  );
}

const bearer: Middleware = {
  onRequest({ request }) {
    const token = session.token();
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
};

function typedClient() {
  const client = createClient<paths>({ baseUrl: origin || globalThis.location?.origin });
  client.use(bearer);
  return client;
}

/**
 * The typed chat API, at the page's origin unless `setApiOrigin` moved it (a new client
 * then takes its place; importers see it through the live binding).
 */
export let api = typedClient();

/** The data of a successful answer; any other answer is thrown as an ApiProblem. */
export async function call<T>(
  pending: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await pending;
  } catch (error) {
    throw networkProblem(error);
  }
  const { response } = result;
  if (response.ok) return result.data as T;
  const problem = problemFrom(
    response.status,
    result.error ?? null,
    `The server answered ${response.status} ${response.statusText}`.trim(),
  );
  if (response.status === 401 && problem.code !== 'invalid_credentials') onUnauthenticated();
  throw problem;
}
