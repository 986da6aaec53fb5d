import { randomBytes } from 'node:crypto';
import { generateSecretKeySpec } from '@switchyard/security';
import { startApp, type AppProcess } from '@switchyard/testing';
import fc from 'fast-check';
import { freshAccount, Stack, uniqueName } from '../support/stack.js';

// Thousands of generated malformed requests against every public route of the edge (and
// the admin API behind it) and of the web front (and the chat API behind it): none may be
// a 5xx, none may take longer than the bound, and every service is healthy afterwards
// (docs/architecture.md, "Bad input"). FUZZ_RUNS and FUZZ_SEED replay a run.

const RUNS = Number(process.env.FUZZ_RUNS ?? 5_000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
/** Generous for a machine shared by many test runs; a stall on parsing costs seconds. */
const MAX_MS = Number(process.env.FUZZ_MAX_MS ?? 2_000);
const CONCURRENCY = 8;

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Every public route; `:x` segments are filled with generated text. */
const EDGE_ROUTES: [Method, string][] = [
  ['POST', '/v1/chat/completions'],
  ['POST', '/v1/embeddings'],
  ['POST', '/v1/images/generations'],
  ['GET', '/v1/models'],
  ['POST', '/api/auth/login'],
  ['GET', '/api/auth/me'],
  ['GET', '/api/admins'],
  ['POST', '/api/admins'],
  ['GET', '/api/admins/:id'],
  ['PATCH', '/api/admins/:id'],
  ['DELETE', '/api/admins/:id'],
  ['GET', '/api/audit'],
  ['GET', '/api/channels'],
  ['POST', '/api/channels'],
  ['POST', '/api/channels/import'],
  ['GET', '/api/channels/:id'],
  ['PATCH', '/api/channels/:id'],
  ['DELETE', '/api/channels/:id'],
  ['POST', '/api/channels/:id/enable'],
  ['POST', '/api/channels/:id/disable'],
  ['PATCH', '/api/channels/:id/keys/:id'],
  ['GET', '/api/prices'],
  ['PUT', '/api/prices'],
  ['DELETE', '/api/prices/:model'],
  ['GET', '/api/tokens'],
  ['POST', '/api/tokens'],
  ['POST', '/api/tokens/bundle'],
  ['GET', '/api/tokens/:id'],
  ['PATCH', '/api/tokens/:id'],
  ['DELETE', '/api/tokens/:id'],
  ['GET', '/api/usage/logs'],
  ['GET', '/api/usage/summary'],
  ['GET', '/api/overview/series'],
  ['GET', '/api/overview/health'],
  ['POST', '/api/channels/upstream-models'],
  ['POST', '/api/channels/:id/upstream-models'],
  ['GET', '/api/prices/unpriced'],
];

const WEB_ROUTES: [Method, string][] = [
  ['POST', '/api/auth/register'],
  ['POST', '/api/auth/login'],
  ['GET', '/api/auth/me'],
  ['GET', '/api/conversations'],
  ['POST', '/api/conversations'],
  ['GET', '/api/conversations/:id'],
  ['PATCH', '/api/conversations/:id'],
  ['DELETE', '/api/conversations/:id'],
  ['GET', '/api/conversations/:id/messages'],
  ['POST', '/api/conversations/:id/messages'],
  ['GET', '/api/models'],
  ['POST', '/api/models/from-link'],
  ['GET', '/api/usage'],
  ['GET', '/api/admin/users'],
  ['PATCH', '/api/admin/users/:id'],
  ['GET', '/api/admin/models'],
  ['POST', '/api/admin/models'],
  ['PATCH', '/api/admin/models/:id'],
  ['DELETE', '/api/admin/models/:id'],
  ['GET', '/api/admin/api-keys'],
  ['POST', '/api/admin/api-keys'],
  ['GET', '/api/admin/api-keys/:id'],
  ['PATCH', '/api/admin/api-keys/:id'],
  ['DELETE', '/api/admin/api-keys/:id'],
  ['GET', '/api/admin/mcp-servers'],
  ['POST', '/api/admin/mcp-servers'],
  ['GET', '/api/admin/mcp-servers/:id'],
  ['PATCH', '/api/admin/mcp-servers/:id'],
  ['DELETE', '/api/admin/mcp-servers/:id'],
  ['GET', '/api/mcp-servers'],
  ['GET', '/api/admin/a2a-agents'],
  ['POST', '/api/admin/a2a-agents'],
  ['GET', '/api/admin/a2a-agents/:id'],
  ['PATCH', '/api/admin/a2a-agents/:id'],
  ['DELETE', '/api/admin/a2a-agents/:id'],
  ['GET', '/api/me/a2a-keys'],
  ['POST', '/api/me/a2a-keys'],
  ['POST', '/api/me/a2a-keys/:id/revoke'],
  ['POST', '/api/a2a'],
  ['GET', '/api/a2a/agent-card.json'],
  ['GET', '/.well-known/agent-card.json'],
  ['GET', '/api/admin/edition'],
  ['POST', '/api/admin/edition/activate'],
  ['GET', '/'],
  ['GET', '/assets/:id'],
];

const QUERY_NAMES = [
  'page',
  'pageSize',
  'tokenId',
  'channelId',
  'actorId',
  'model',
  'search',
  'action',
  'status',
  'from',
  'to',
  'groupBy',
  'purpose',
];
const FIELD_NAMES = [
  'name',
  'username',
  'password',
  'model',
  'messages',
  'title',
  'content',
  'items',
  'keys',
  'models',
  'quota',
  'version',
  'role',
  'disabled',
  'baseUrl',
  'groups',
  'modelMapping',
  'expiresAt',
  'key',
  'platform',
];

/** Text that has broken servers: NUL, lone surrogates, huge numbers, traversal, format strings. */
const nastyText = fc.oneof(
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udfff',
    'x\ud83d',
    '99999999999999999999',
    '9007199254740993',
    '2147483648',
    '-1',
    '0',
    '1e400',
    'NaN',
    '../../etc/passwd',
    '%s%n',
    '<script>',
    "' OR 1=1 --",
    '*',
    '',
    ' ',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 300 }),
);

const nastyValue = fc.oneof(
  nastyText,
  fc.integer(),
  fc.double(),
  fc.constantFrom(null, true, false, 2 ** 53 + 2, -(2 ** 63), 1e308),
  fc.array(fc.constantFrom(0, 'x', null), { maxLength: 5 }),
);

/** A JSON body of some hostile shape, as the bytes sent. */
const jsonBody: fc.Arbitrary<string> = fc.oneof(
  // Plausible objects with wrong or strange values.
  fc
    .dictionary(fc.oneof(fc.constantFrom(...FIELD_NAMES), nastyText), nastyValue, { maxKeys: 6 })
    .map((value) => JSON.stringify(value)),
  // Anything JSON can say, top level included.
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  // Deep nesting, arrays and objects.
  fc
    .record({ depth: fc.integer({ min: 33, max: 20_000 }), open: fc.constantFrom('[', '{"a":') })
    .map(({ depth, open }) =>
      open === '['
        ? '['.repeat(depth) + ']'.repeat(depth)
        : open.repeat(depth) + '1' + '}'.repeat(depth),
    ),
  // Large arrays and objects (up to ~500 KB).
  fc
    .record({ field: fc.constantFrom(...FIELD_NAMES), n: fc.integer({ min: 1_000, max: 60_000 }) })
    .map(({ field, n }) => JSON.stringify({ [field]: new Array(n).fill(0) })),
  fc.integer({ min: 1_001, max: 40_000 }).map((n) => {
    const keys: Record<string, number> = {};
    for (let i = 0; i < n; i += 1) keys[`k${i}`] = i;
    return JSON.stringify(keys);
  }),
  // Broken JSON.
  fc.constantFrom(
    '{',
    '{"a":',
    '[1,2',
    '{"a":1}}',
    'nul',
    '\u0000',
    '{"a":"\\ud800"}',
    '"\\u0000"',
  ),
);

interface FuzzRequest {
  target: 'edge' | 'web';
  method: Method;
  path: string;
  query: [string, string][];
  body: string | undefined;
  contentType: string | undefined;
  authenticated: boolean;
}

/**
 * Percent-encodes any text, lone surrogates included (as the bytes a client would send for
 * them, %ED%A0%80 for \ud800), where `encodeURIComponent` throws.
 */
function encode(text: string): string {
  return text.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]|[\uD800-\uDFFF]|[^]/g, (unit) => {
    const code = unit.charCodeAt(0);
    if (unit.length === 2 || code < 0xd800 || code > 0xdfff) return encodeURIComponent(unit);
    return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
      .map((byte) => `%${byte.toString(16).toUpperCase()}`)
      .join('');
  });
}

function fill(route: string, segments: string[]): string {
  let index = 0;
  return route.replace(/:\w+/g, () => encode(segments[index++ % segments.length]!));
}

const request: fc.Arbitrary<FuzzRequest> = fc
  .record({
    target: fc.constantFrom<'edge' | 'web'>('edge', 'web'),
    edgeRoute: fc.constantFrom(...EDGE_ROUTES),
    webRoute: fc.constantFrom(...WEB_ROUTES),
    segments: fc.array(nastyText, { minLength: 1, maxLength: 2 }),
    query: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_NAMES), nastyText), nastyText), {
      maxLength: 3,
    }),
    body: fc.option(jsonBody, { freq: 4 }),
    contentType: fc.constantFrom(
      'application/json',
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      undefined,
    ),
    authenticated: fc.boolean(),
  })
  .map(({ target, edgeRoute, webRoute, segments, query, body, contentType, authenticated }) => {
    const [method, route] = target === 'edge' ? edgeRoute : webRoute;
    return {
      target,
      method,
      path: fill(route, segments),
      query,
      body: method === 'GET' || method === 'DELETE' ? undefined : (body ?? undefined),
      contentType,
      authenticated,
    };
  });

interface Outcome {
  request: FuzzRequest;
  status: number;
  ms: number;
  excerpt: string;
}

describe('fuzz: malformed requests on every public port', () => {
  const owner = { username: 'owner', password: `first-${randomBytes(6).toString('hex')}` };
  const chatAdmin = { username: 'root', password: `root-${randomBytes(6).toString('hex')}` };
  const stack = new Stack({ admin: owner });
  let chat: AppProcess;
  let web: AppProcess;
  let gatewayToken = '';
  let adminSession = '';
  let chatSession = '';

  beforeAll(async () => {
    await stack.start();
    chat = await startApp('chat', {
      env: {
        ...stack.env,
        SECRET_KEYS: generateSecretKeySpec('fuzz'),
        CHAT_ADMIN_USERNAME: chatAdmin.username,
        CHAT_ADMIN_PASSWORD: chatAdmin.password,
      },
      readyPath: '/readyz',
    });
    web = await startApp('web', { env: { CHAT_URL: chat.url } });

    const model = uniqueName('m');
    await stack.createChannel({ models: [model], keys: [await freshAccount(stack)] });
    gatewayToken = (await stack.createToken()).key;
    const login = async (url: string, body: object) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.18.99.1' },
        body: JSON.stringify(body),
      });
      return ((await response.json()) as { token: string }).token;
    };
    adminSession = await login(`${stack.edge.url}/api/auth/login`, owner);
    const newPassword = `changed-${randomBytes(6).toString('hex')}`;
    await fetch(`${stack.edge.url}/api/auth/password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${adminSession}` },
      body: JSON.stringify({ currentPassword: owner.password, newPassword }),
    });
    adminSession = await login(`${stack.edge.url}/api/auth/login`, {
      username: owner.username,
      password: newPassword,
    });
    chatSession = await login(`${web.url}/api/auth/login`, chatAdmin);
  }, 420_000);

  afterAll(async () => {
    await Promise.all([web?.stop(), chat?.stop()]);
    await stack.stop();
  });

  async function send(fuzz: FuzzRequest): Promise<Outcome> {
    const base = fuzz.target === 'edge' ? stack.edge.url : web.url;
    const search = fuzz.query.map(([name, value]) => `${encode(name)}=${encode(value)}`).join('&');
    const headers: Record<string, string> = {};
    if (fuzz.contentType && fuzz.body !== undefined) headers['content-type'] = fuzz.contentType;
    if (fuzz.authenticated) {
      const session =
        fuzz.target === 'web'
          ? chatSession
          : fuzz.path.startsWith('/v1')
            ? gatewayToken
            : adminSession;
      headers.authorization = `Bearer ${session}`;
    }
    const started = performance.now();
    const response = await fetch(`${base}${fuzz.path}${search ? `?${search}` : ''}`, {
      method: fuzz.method,
      headers,
      body: fuzz.body,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    return {
      request: fuzz,
      status: response.status,
      ms: performance.now() - started,
      excerpt: text.slice(0, 200),
    };
  }

  it(`answers ${RUNS} malformed requests without a 5xx or a stall (seed ${SEED})`, async () => {
    const requests = fc.sample(request, { numRuns: RUNS, seed: SEED });
    const outcomes: Outcome[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < requests.length) {
          outcomes.push(await send(requests[next++]!));
        }
      }),
    );

    const describe = (o: Outcome) =>
      `${o.status} in ${Math.round(o.ms)} ms: ${o.request.method} ${o.request.target}${o.request.path} ` +
      `body ${(o.request.body ?? '').slice(0, 80)}… → ${o.excerpt}`;
    expect(outcomes).toHaveLength(RUNS);
    expect(outcomes.filter((o) => o.status >= 500).map(describe)).toEqual([]);
    expect(outcomes.filter((o) => o.ms > MAX_MS).map(describe)).toEqual([]);
    const sorted = outcomes.map((o) => o.ms).sort((a, b) => a - b);
    process.stdout.write(
      `fuzz: ${RUNS} requests, seed ${SEED}, p50 ${Math.round(sorted[Math.floor(RUNS / 2)]!)} ms, ` +
        `p99 ${Math.round(sorted[Math.floor(RUNS * 0.99)]!)} ms, max ${Math.round(sorted.at(-1)!)} ms\n`,
    );

    // Every service still answers, and still does its job.
    for (const app of [stack.edge, stack.admin!, chat, web, ...stack.routers]) {
      expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    }
    for (const app of [stack.edge, stack.admin!, chat]) {
      expect((await fetch(`${app.url}/readyz`)).status).toBe(200);
    }
    const me = await fetch(`${web.url}/api/auth/me`, {
      headers: { authorization: `Bearer ${chatSession}` },
    });
    expect(me.status).toBe(200);
  }, 240_000);
});
