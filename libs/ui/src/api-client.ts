import { explain, type Explanation, type Vocabulary } from './explain.js';
import { networkProblem, problemFrom, type Problem } from './problem.js';
import type { SessionClient } from './session.js';

// One way for both apps to call their API: the session token kept in localStorage and sent
// as a bearer credential, every failure thrown as a `Problem` with the API's stable code, a
// 401 on a signed-in call ending the session (docs/architecture.md, "Web UIs"). The typed
// client comes from the app (openapi-fetch over its generated paths), so libs/ui needs
// neither openapi-fetch nor either API's types.

/** The session credential openapi-fetch's middleware adds, as far as the kit needs it. */
export interface BearerMiddleware {
  onRequest(options: { request: Request }): Request;
}

/** What an openapi-fetch call answers, as far as `call` reads it. */
export interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

export interface ApiClientOptions<Client> {
  /** The localStorage key of the session token: each app keeps its own. */
  tokenKey: string;
  /** A typed client at `baseUrl`; the kit adds the bearer credential to it. */
  create: (baseUrl: string) => Client;
  /** The app's words for its API's codes. */
  vocabulary: Vocabulary;
  /** What an answer without the API's error body says (a proxy's page, an empty 500). */
  answered?: (response: Response) => string;
  /** What a request that got no answer says; the browser's own words when unset. */
  unreachable?: string;
}

export interface ApiClient<Client> {
  /** The typed API; `setOrigin` puts a new one here, so read it at each call. */
  readonly api: Client;
  // Members are function properties, not methods: they use no `this`, so they may be
  // destructured and passed around on their own.
  session: { token: () => string | null; save: (token: string) => void; clear: () => void };
  /** The API at another origin than the page's (tests run outside a page). */
  setOrigin: (url: string) => void;
  /** An absolute path on the API's origin, for a request made by hand. */
  url: (path: string) => string;
  /** Headers of a request made by hand: what it accepts, its JSON body, the session. */
  headers: (json: boolean, accept?: string) => Record<string, string>;
  /** Called when the API says the session is over (expired, revoked, signed out elsewhere). */
  whenUnauthenticated: (handler: () => void) => void;
  /** The data of a successful answer; any other answer is thrown as a `Problem`. */
  call: <T>(pending: Promise<FetchResult<T>>) => Promise<T>;
  /** A request made by hand (an upload, a stream): its answer if OK, else thrown as a `Problem`. */
  send: (path: string, init: RequestInit) => Promise<Response>;
  /** A request that got no answer, as a `Problem`. */
  unreachable: (error: unknown) => Error & Problem;
  explain: (error: unknown) => Explanation;
  /** What `useSession` needs, with the app's own calls for who is signed in and signing out. */
  sessionClient: <Me>(calls: {
    me: () => Promise<Me>;
    logout: () => Promise<unknown>;
  }) => SessionClient<Me>;
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

const serverAnswered = (response: Response): string =>
  `The server answered ${response.status} ${response.statusText}`.trim();

export function createApiClient<Client extends { use(middleware: BearerMiddleware): void }>(
  options: ApiClientOptions<Client>,
): ApiClient<Client> {
  const answered = options.answered ?? serverAnswered;
  let origin = '';
  let onUnauthenticated: () => void = () => undefined;

  const session = {
    token(): string | null {
      // Storage can be refused (a privacy mode) or missing (outside a browser): no session.
      try {
        return localStorage.getItem(options.tokenKey);
      } catch {
        return null;
      }
    },
    save(token: string): void {
      localStorage.setItem(options.tokenKey, token);
    },
    clear(): void {
      localStorage.removeItem(options.tokenKey);
    },
  };

  const bearer: BearerMiddleware = {
    onRequest({ request }) {
      const token = session.token();
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
  };

  const typed = (): Client => {
    const client = options.create(origin || (globalThis.location?.origin ?? ''));
    client.use(bearer);
    return client;
  };

  const unreachable = (error: unknown) => networkProblem(error, options.unreachable);

  // Wrong credentials are a 401 too, but no session ended.
  const ended = (problem: Problem): void => {
    if (problem.status === 401 && problem.code !== 'invalid_credentials') onUnauthenticated();
  };

  const failure = async (response: Response): Promise<Error & Problem> => {
    const text = await response.text().catch(() => '');
    const problem = problemFrom(response.status, parseJson(text), answered(response));
    ended(problem);
    return problem;
  };

  const headers = (json: boolean, accept = 'application/json'): Record<string, string> => {
    const token = session.token();
    return {
      accept,
      ...(json ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    };
  };

  const kit = {
    api: typed(),
    session,
    setOrigin(url: string): void {
      origin = url.replace(/\/+$/, '');
      kit.api = typed();
    },
    url: (path: string): string => `${origin}${path}`,
    headers,
    whenUnauthenticated(handler: () => void): void {
      onUnauthenticated = handler;
    },
    async call<T>(pending: Promise<FetchResult<T>>): Promise<T> {
      let result: FetchResult<T>;
      try {
        result = await pending;
      } catch (error) {
        throw unreachable(error);
      }
      const { response } = result;
      if (response.ok) return result.data as T;
      const problem = problemFrom(response.status, result.error ?? null, answered(response));
      ended(problem);
      throw problem;
    },
    async send(path: string, init: RequestInit): Promise<Response> {
      let response: Response;
      try {
        response = await fetch(kit.url(path), init);
      } catch (error) {
        throw unreachable(error);
      }
      if (!response.ok) throw await failure(response);
      return response;
    },
    unreachable,
    explain: (error: unknown): Explanation => explain(error, options.vocabulary),
    sessionClient: <Me>(calls: {
      me(): Promise<Me>;
      logout(): Promise<unknown>;
    }): SessionClient<Me> => ({
      hasToken: () => session.token() !== null,
      clear: () => session.clear(),
      whenUnauthenticated: (handler) => kit.whenUnauthenticated(handler),
      me: () => calls.me(),
      logout: () => calls.logout(),
    }),
  };
  return kit;
}
