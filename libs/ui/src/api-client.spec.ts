import { createApiClient, type BearerMiddleware } from './api-client.js';
import { asProblem } from './problem.js';

/** A stand-in for openapi-fetch's client: only the middleware matters here. */
class FakeClient {
  middleware: BearerMiddleware[] = [];
  constructor(readonly baseUrl: string) {}
  use(middleware: BearerMiddleware): void {
    this.middleware.push(middleware);
  }
}

function kit(options: { answered?: (response: Response) => string; unreachable?: string } = {}) {
  return createApiClient({
    tokenKey: 'test.token',
    create: (baseUrl) => new FakeClient(baseUrl),
    vocabulary: { codes: { invalid_credentials: { title: 'Wrong username or password.' } } },
    ...options,
  });
}

const answer = (status: number, error?: unknown, data?: unknown) =>
  Promise.resolve({ data, error, response: new Response(null, { status }) });

async function thrown(pending: Promise<unknown>) {
  try {
    await pending;
  } catch (failure) {
    return asProblem(failure);
  }
  throw new Error('it did not fail');
}

describe('createApiClient', () => {
  const stored = new Map<string, string>();
  beforeAll(() => {
    Object.assign(globalThis, {
      localStorage: {
        getItem: (key: string) => stored.get(key) ?? null,
        setItem: (key: string, value: string) => stored.set(key, value),
        removeItem: (key: string) => stored.delete(key),
      },
    });
  });
  afterAll(() => {
    delete (globalThis as { localStorage?: unknown }).localStorage;
  });
  beforeEach(() => stored.clear());

  it('sends the stored session as a bearer credential', () => {
    const client = kit();
    const request = () =>
      client.api.middleware[0]!.onRequest({ request: new Request('http://x.example/api') });
    expect(request().headers.get('authorization')).toBeNull();
    client.session.save('secret');
    expect(stored.get('test.token')).toBe('secret');
    expect(request().headers.get('authorization')).toBe('Bearer secret');
    expect(client.headers(true)).toEqual({
      accept: 'application/json',
      'content-type': 'application/json',
      authorization: 'Bearer secret',
    });
    client.session.clear();
    expect(
      client
        .sessionClient({ me: () => Promise.resolve(1), logout: () => Promise.resolve(2) })
        .hasToken(),
    ).toBe(false);
  });

  it('answers the data, or throws the problem the API named', async () => {
    const client = kit();
    await expect(client.call(answer(200, undefined, { id: 1 }))).resolves.toEqual({ id: 1 });
    await expect(
      thrown(client.call(answer(409, { error: { code: 'conflict', message: 'Taken' } }))),
    ).resolves.toMatchObject({ status: 409, code: 'conflict', message: 'Taken' });
  });

  it("says the app's words when the answer has no error body or never came", async () => {
    const client = kit({
      answered: (response) => `The gateway answered ${response.status}.`,
      unreachable: 'The gateway cannot be reached.',
    });
    await expect(thrown(client.call(answer(500)))).resolves.toMatchObject({
      code: 'http_500',
      message: 'The gateway answered 500.',
    });
    await expect(
      thrown(client.call(Promise.reject(new TypeError('Failed to fetch')))),
    ).resolves.toMatchObject({ code: 'network_error', message: 'The gateway cannot be reached.' });
  });

  it('ends the session on a 401, but not on wrong credentials', async () => {
    const client = kit();
    let ended = 0;
    client.whenUnauthenticated(() => (ended += 1));
    await thrown(client.call(answer(401, { error: { code: 'invalid_credentials', message: '' } })));
    expect(ended).toBe(0);
    await thrown(client.call(answer(401, { error: { code: 'unauthenticated', message: '' } })));
    expect(ended).toBe(1);
    expect(client.explain({ code: 'invalid_credentials', message: 'x' }).title).toBe(
      'Wrong username or password.',
    );
  });

  it('moves to another origin with a new typed client', () => {
    const client = kit();
    client.setOrigin('http://127.0.0.1:9/');
    expect(client.api.baseUrl).toBe('http://127.0.0.1:9');
    expect(client.url('/api/attachments')).toBe('http://127.0.0.1:9/api/attachments');
  });
});
