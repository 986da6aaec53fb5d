import { type Problem } from '@switchyard/ui';
import createClient, { type Middleware } from 'openapi-fetch';
import { type components, type paths } from '../generated/admin-api.js';

// The admin API, typed from its OpenAPI document (src/generated, built by
// scripts/generate-client.mjs): a path, parameter or field the API does not have is a
// type error here, not a failure in the browser.

export type Schemas = components['schemas'];

const SESSION_KEY = 'switchyard.dashboard.session';

export const session = {
  token: (): string | null => localStorage.getItem(SESSION_KEY),
  set: (token: string): void => localStorage.setItem(SESSION_KEY, token),
  clear: (): void => localStorage.removeItem(SESSION_KEY),
};

let unauthenticated: () => void = () => undefined;

/** Called when the API says the session is over (expired, revoked, signed out elsewhere). */
export function whenUnauthenticated(handler: () => void): void {
  unauthenticated = handler;
}

const bearer: Middleware = {
  onRequest({ request }) {
    const token = session.token();
    if (token) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin });
api.use(bearer);

interface ErrorBody {
  error?: { code?: string; message?: string; fields?: { field: string; message: string }[] };
}

/** The data of a successful answer; any other answer is thrown as a `Problem`. */
export async function call<T>(
  pending: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await pending;
  } catch {
    throw {
      code: 'network_error',
      message: 'The gateway cannot be reached. Check your connection and that it is running.',
    } satisfies Problem;
  }
  const { response } = result;
  if (response.ok) return result.data as T;
  const body = (result.error ?? {}) as ErrorBody;
  const problem: Problem = {
    status: response.status,
    code: body.error?.code ?? `http_${response.status}`,
    message: body.error?.message ?? `The gateway answered ${response.status}.`,
    ...(body.error?.fields ? { fields: body.error.fields } : {}),
  };
  if (response.status === 401 && problem.code !== 'invalid_credentials') unauthenticated();
  throw problem;
}

/** What a failure means to the person looking, by the API's stable codes. */
export function explain(code: string, status: number | undefined): string | undefined {
  if (status === 403 && code !== 'password_change_required')
    return 'Your role does not allow this. Ask an owner or administrator.';
  switch (code) {
    case 'invalid_credentials':
      return 'Wrong username or password.';
    case 'too_many_attempts':
      return 'Too many attempts. Wait a few minutes, then try again.';
    case 'validation_failed':
      return 'Some fields need another look.';
    case 'version_conflict':
      return 'Someone else changed this since you opened it. Reload and try again.';
    case 'password_change_required':
      return 'Change your password first.';
    case 'bad_gateway':
      return 'The admin service is not reachable; check that it is running.';
    default:
      return undefined;
  }
}
