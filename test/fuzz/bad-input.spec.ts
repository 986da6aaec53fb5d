import { randomBytes } from 'node:crypto';
import { generateSecretKeySpec } from '@switchyard/security';
import { startApp, type AppProcess } from '@switchyard/testing';
import fc from 'fast-check';
import { freshKeyPair } from '../support/provider-gateway.js';
import { freshAccount, Stack, uniqueName } from '../support/stack.js';

// Thousands of generated malformed requests against every public route of the edge (and
// the admin API behind it) and of the web front (and the chat API behind it): none may be
// a 5xx, none may take longer than the bound, every refusal on /v1 has the API's error
// shape, and every service is healthy afterwards (docs/architecture.md, "Bad input").
// Besides hostile bodies of any shape, a share of the requests are Anthropic Messages and
// OpenAI Responses requests for models the token may use, valid but for a few generated
// values: they get past the edge's checks into the conversion for each provider's channel
// (docs/providers.md). FUZZ_RUNS and FUZZ_SEED replay a run.

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
  ['POST', '/v1/responses'],
  ['GET', '/v1/responses/:id'],
  ['DELETE', '/v1/responses/:id'],
  ['POST', '/v1/responses/:id/cancel'],
  ['GET', '/v1/responses/:id/input_items'],
  ['GET', '/v1/dashboard/billing/subscription'],
  ['GET', '/v1/dashboard/billing/usage'],
  ['GET', '/v1/key/info'],
  ['POST', '/v1/messages'],
  ['POST', '/v1/messages/count_tokens'],
  ['POST', '/v1/completions'],
  ['POST', '/v1/moderations'],
  ['POST', '/v1/rerank'],
  ['POST', '/v1/audio/speech'],
  ['POST', '/v1/audio/transcriptions'],
  ['POST', '/v1/audio/translations'],
  ['GET', '/v1/models'],
  // Gemini's model methods, `models/{model}:{method}`, are fuzzed with well-formed model
  // names (apiRequest below): a path that does not decode (a lone surrogate) is refused
  // before any route, a 400 of its own (gateway/errors.spec.ts).
  ['GET', '/v1beta/models'],
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

/** The providers of the channels the API requests are routed to. */
const PROVIDERS = ['openai', 'anthropic', 'gemini', 'bedrock'] as const;
type Provider = (typeof PROVIDERS)[number];

/** A value of the wrong type where code that trusts the shape would dereference it. */
const wrongValue = fc.oneof(
  fc.constantFrom(null, true, 0, '', [], {}, [null], { type: null }),
  nastyValue,
);

/** A value as the API wants it, mostly; now and then a wrong one in its place. */
function mostly(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 9, arbitrary: valid }, { weight: 1, arbitrary: wrongValue });
}

/** An object with the `required` fields and some of the `optional` ones, each mostly valid. */
function fields(
  required: Record<string, fc.Arbitrary<unknown>>,
  optional: Record<string, fc.Arbitrary<unknown>> = {},
): fc.Arbitrary<Record<string, unknown>> {
  const mostlyValid = (shape: Record<string, fc.Arbitrary<unknown>>) =>
    Object.fromEntries(Object.entries(shape).map(([name, valid]) => [name, mostly(valid)]));
  return fc
    .tuple(fc.record(mostlyValid(required)), fc.record(mostlyValid(optional), { requiredKeys: [] }))
    .map(([present, some]) => ({ ...present, ...some }));
}

/** One to `maxLength` items, each mostly valid. */
function items(item: fc.Arbitrary<unknown>, maxLength: number): fc.Arbitrary<unknown[]> {
  return fc.array(mostly(item), { minLength: 1, maxLength });
}

const words = fc.oneof(fc.string({ maxLength: 40 }), nastyText);
const toolName = fc.constantFrom('get_weather', 'lookup', '', 'a b');
const callId = fc.constantFrom('call_1', 'toolu_1', 'tooluse_1', 'unknown');
const schema = fc.oneof(
  fc.constant({ type: 'object', properties: { city: { type: 'string' } } }),
  fc.jsonValue({ maxDepth: 3 }),
);
const imageData = fc.constantFrom(
  'iVBORw0KGgo=',
  'R0lGODlhAQABAAAAACw=',
  '!!! not base64',
  '',
  'data:image/png;base64,iVBORw0KGgo=',
);
const imageUrl = fc.constantFrom(
  'https://example.com/cat.png',
  'data:image/png;base64,iVBORw0KGgo=',
  'data:image/png;base64,',
  'data:;base64,AAAA',
  'data:text/html,<b>x</b>',
  'not a url',
  '',
);

const anthropicText = fields(
  { type: fc.constant('text'), text: words },
  { cache_control: fc.jsonValue() },
);
const anthropicImage = fields({
  type: fc.constant('image'),
  source: fc.oneof(
    fields({
      type: fc.constant('base64'),
      media_type: fc.constantFrom('image/png', 'image/jpeg', 'image/webp', 'text/plain', ''),
      data: imageData,
    }),
    fields({ type: fc.constant('url'), url: imageUrl }),
    fields({ type: fc.constantFrom('file', 'text') }, { file_id: words, data: words }),
  ),
});
const anthropicBlock = fc.oneof(
  { weight: 3, arbitrary: anthropicText },
  anthropicImage,
  fields(
    { type: fc.constant('tool_use'), id: callId, name: toolName },
    { input: fc.jsonValue({ maxDepth: 3 }) },
  ),
  fields(
    { type: fc.constant('tool_result'), tool_use_id: callId },
    {
      content: fc.oneof(words, items(fc.oneof(anthropicText, anthropicImage), 3)),
      is_error: fc.boolean(),
    },
  ),
  fields(
    {
      type: fc.constantFrom(
        'thinking',
        'redacted_thinking',
        'document',
        'server_tool_use',
        'web_search_tool_result',
      ),
    },
    { thinking: words, signature: words, data: words, source: fc.jsonValue({ maxDepth: 2 }) },
  ),
);
const anthropicContent = fc.oneof(words, items(anthropicBlock, 4));

/** Anthropic's Messages request (and a token count's): https://docs.anthropic.com/en/api/messages. */
const messagesBody = fields(
  {
    max_tokens: fc.integer({ min: 1, max: 4_096 }),
    messages: items(
      fields({ role: fc.constantFrom('user', 'assistant'), content: anthropicContent }),
      4,
    ),
  },
  {
    system: fc.oneof(words, items(anthropicText, 2)),
    tools: items(
      fc.oneof(
        fields(
          { name: toolName },
          { description: words, input_schema: schema, type: fc.constant('custom') },
        ),
        fields({ type: fc.constantFrom('web_search_20250305', 'bash_20250124'), name: toolName }),
      ),
      3,
    ),
    tool_choice: fields(
      { type: fc.constantFrom('auto', 'any', 'none', 'tool', 'function') },
      { name: toolName, disable_parallel_tool_use: fc.boolean() },
    ),
    stop_sequences: items(words, 3),
    temperature: fc.double({ min: 0, max: 1, noNaN: true }),
    top_p: fc.double({ min: 0, max: 1, noNaN: true }),
    top_k: fc.integer({ min: 1, max: 100 }),
    metadata: fields({}, { user_id: words }),
    thinking: fields({ type: fc.constant('enabled'), budget_tokens: fc.integer() }),
    stream: fc.boolean(),
  },
);

const responsesPart = fc.oneof(
  {
    weight: 3,
    arbitrary: fields({ type: fc.constantFrom('input_text', 'output_text'), text: words }),
  },
  fields({ type: fc.constant('refusal') }, { refusal: words }),
  fields(
    { type: fc.constant('input_image') },
    { image_url: imageUrl, file_id: words, detail: fc.constantFrom('auto', 'low', 'high', 'x') },
  ),
  fields({ type: fc.constantFrom('input_file', 'input_audio') }, { file_id: words }),
);
const responsesItem = fc.oneof(
  {
    weight: 3,
    arbitrary: fields(
      { role: fc.constantFrom('user', 'assistant', 'system', 'developer', 'tool') },
      { type: fc.constant('message'), content: fc.oneof(words, items(responsesPart, 3)) },
    ),
  },
  fields(
    { type: fc.constant('function_call'), call_id: callId, name: toolName },
    { arguments: fc.oneof(fc.constant('{"city":"Oslo"}'), fc.constant('{broken'), words) },
  ),
  fields(
    { type: fc.constant('function_call_output'), call_id: callId },
    { output: fc.oneof(words, items(responsesPart, 2)) },
  ),
  fields(
    { type: fc.constantFrom('reasoning', 'item_reference', 'web_search_call') },
    { id: words },
  ),
);

/** OpenAI's Responses request: https://platform.openai.com/docs/api-reference/responses. */
const responsesBody = fields(
  { input: fc.oneof(words, items(responsesItem, 5)) },
  {
    instructions: words,
    tools: items(
      fc.oneof(
        {
          weight: 3,
          arbitrary: fields(
            { type: fc.constant('function'), name: toolName },
            { description: words, parameters: schema, strict: fc.boolean() },
          ),
        },
        fields({ type: fc.constantFrom('web_search', 'file_search', 'mcp') }),
      ),
      3,
    ),
    tool_choice: fc.oneof(
      fc.constantFrom('auto', 'none', 'required'),
      fields({ type: fc.constantFrom('function', 'web_search') }, { name: toolName }),
    ),
    text: fields(
      {
        format: fc.oneof(
          fields({ type: fc.constantFrom('text', 'json_object', 'xml') }),
          fields(
            { type: fc.constant('json_schema') },
            { name: words, schema, strict: fc.boolean(), description: words },
          ),
        ),
      },
      { verbosity: fc.constantFrom('low', 'high') },
    ),
    reasoning: fields({}, { effort: fc.constantFrom('minimal', 'low', 'high') }),
    max_output_tokens: fc.integer({ min: 1, max: 4_096 }),
    temperature: fc.double({ min: 0, max: 2, noNaN: true }),
    top_p: fc.double({ min: 0, max: 1, noNaN: true }),
    parallel_tool_calls: fc.boolean(),
    store: fc.boolean(),
    background: fc.boolean(),
    previous_response_id: words,
    truncation: fc.constantFrom('auto', 'disabled'),
    user: words,
    safety_identifier: words,
    stream: fc.boolean(),
  },
);

const geminiText = fields({ text: words });
const geminiPart = fc.oneof(
  geminiText,
  fields({
    inlineData: fields({
      mimeType: fc.constantFrom('image/png', 'audio/wav', ''),
      data: imageData,
    }),
  }),
  fields({
    functionCall: fields({ name: toolName }, { args: fc.jsonValue({ maxDepth: 2 }), id: callId }),
  }),
  fields({
    functionResponse: fields(
      { name: toolName },
      { response: fc.jsonValue({ maxDepth: 2 }), id: callId },
    ),
  }),
  fields({ fileData: fields({ fileUri: words }) }),
);
const geminiBody = fields(
  {
    contents: items(
      fields(
        { parts: items(geminiPart, 3) },
        { role: fc.constantFrom('user', 'model', 'function', 'tool') },
      ),
      4,
    ),
  },
  {
    systemInstruction: fc.oneof(words, fields({ parts: items(geminiText, 2) })),
    tools: items(
      fc.oneof(
        fields({
          functionDeclarations: items(
            fields(
              { name: toolName },
              { description: words, parameters: schema, parametersJsonSchema: schema },
            ),
            2,
          ),
        }),
        fields({ googleSearch: fc.constant({}) }),
      ),
      2,
    ),
    toolConfig: fields({
      functionCallingConfig: fields(
        { mode: fc.constantFrom('AUTO', 'ANY', 'NONE', 'VALIDATED', 'X') },
        { allowedFunctionNames: items(toolName, 2) },
      ),
    }),
    generationConfig: fields(
      {},
      {
        temperature: fc.double({ min: 0, max: 2, noNaN: true }),
        topP: fc.double({ min: 0, max: 1, noNaN: true }),
        topK: fc.integer({ min: 1, max: 40 }),
        maxOutputTokens: fc.integer({ min: -1, max: 4_096 }),
        stopSequences: items(words, 2),
        candidateCount: fc.integer({ min: 0, max: 3 }),
        responseMimeType: fc.constantFrom('application/json', 'text/plain', 'text/x.enum'),
        responseSchema: schema,
        responseJsonSchema: schema,
      },
    ),
    cachedContent: words,
  },
);
const geminiContent = fields({ parts: items(geminiText, 2) });
const geminiEmbedBody = fc.oneof(
  fields({ content: geminiContent }, { outputDimensionality: fc.integer({ min: -1, max: 10 }) }),
  fields({ requests: items(fields({ content: geminiContent }, { model: words }), 3) }),
);

/**
 * A Messages, token count, Responses or Gemini request for a model a channel of one provider
 * serves, as the token's holder would send it.
 */
const apiRequest: fc.Arbitrary<{
  path: string;
  provider: Provider;
  body: Record<string, unknown>;
}> = fc.oneof(
  fc.record({
    path: fc.constantFrom('/v1/messages', '/v1/messages/count_tokens'),
    provider: fc.constantFrom(...PROVIDERS),
    body: messagesBody,
  }),
  fc.record({
    path: fc.constant('/v1/responses'),
    provider: fc.constantFrom(...PROVIDERS),
    body: responsesBody,
  }),
  // Gemini's API names its model in the path, `{model}` here.
  fc.record({
    path: fc.constantFrom(
      '/v1beta/models/{model}:generateContent',
      '/v1beta/models/{model}:streamGenerateContent',
      '/v1/models/{model}:countTokens',
    ),
    provider: fc.constantFrom(...PROVIDERS),
    body: geminiBody,
  }),
  fc.record({
    path: fc.constantFrom(
      '/v1beta/models/{model}:embedContent',
      '/v1beta/models/{model}:batchEmbedContents',
    ),
    provider: fc.constantFrom(...PROVIDERS),
    body: geminiEmbedBody,
  }),
);

/** The API requests with the models that the stack's channels serve, now and then another. */
function apiRequestFor(models: Record<Provider, string>): fc.Arbitrary<FuzzRequest> {
  return fc
    .tuple(apiRequest, mostly(fc.constant(null)))
    .map(([{ path, provider, body }, model]) => {
      const name = model === null ? models[provider] : model;
      const inPath = path.includes('{model}');
      return {
        target: 'edge' as const,
        method: 'POST' as const,
        // A well-formed name (lone surrogates replaced): see EDGE_ROUTES.
        path: inPath
          ? // A wrong name may be any JSON value: how it reads in the path does not matter.
            // eslint-disable-next-line @typescript-eslint/no-base-to-string
            path.replace('{model}', encodeURIComponent(Buffer.from(String(name)).toString()))
          : path,
        query: [],
        body: JSON.stringify(inPath ? body : { ...body, model: name }),
        contentType: 'application/json',
        authenticated: true,
      };
    });
}

interface Outcome {
  request: FuzzRequest;
  status: number;
  ms: number;
  excerpt: string;
  /** A refusal on /v1 whose body is not in the API's error shape. */
  misshapen: boolean;
}

/**
 * Whether a /v1 refusal has the shape the API's SDKs read (docs/specification.md, "Errors"):
 * Anthropic's on /v1/messages, Google's on Gemini's URLs (docs/providers.md), OpenAI's
 * elsewhere.
 */
function hasErrorShape(path: string, text: string): boolean {
  let body: {
    type?: unknown;
    error?: { type?: unknown; message?: unknown; code?: unknown; status?: unknown };
  } | null;
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    return false;
  }
  if (path.startsWith('/v1beta/') || /^\/v1\/models\/[^/]*:/.test(path))
    return (
      typeof body?.error?.code === 'number' &&
      typeof body.error.status === 'string' &&
      typeof body.error.message === 'string'
    );
  const described = typeof body?.error?.type === 'string' && typeof body.error.message === 'string';
  return path.startsWith('/v1/messages') ? body?.type === 'error' && described : described;
}

describe('fuzz: malformed requests on every public port', () => {
  const owner = { username: 'owner', password: `first-${randomBytes(6).toString('hex')}` };
  const chatAdmin = { username: 'root', password: `root-${randomBytes(6).toString('hex')}` };
  const stack = new Stack({ admin: owner });
  let chat: AppProcess;
  let web: AppProcess;
  let gatewayToken = '';
  const models = {} as Record<Provider, string>;
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

    for (const provider of PROVIDERS) {
      models[provider] = uniqueName(provider);
      await stack.createChannel({
        models: [models[provider]],
        keys: [provider === 'bedrock' ? await freshKeyPair(stack) : await freshAccount(stack)],
        provider,
        providerSettings: provider === 'bedrock' ? { region: 'eu-central-1' } : {},
      });
    }
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

    // The edge starts its token-counting thread on its first local count and evaluates the
    // encoding there (docs/reliability.md, "Counting tokens in bounded time"): a one-time
    // start, seconds on a loaded machine, that the bound below is not about. One count
    // before the run pays it.
    const warm = await fetch(`${stack.edge.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': gatewayToken },
      body: JSON.stringify({ model: models.openai, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(warm.status).toBe(200);
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
    if (fuzz.authenticated && fuzz.target === 'edge' && fuzz.path.startsWith('/v1/messages')) {
      // As Anthropic's SDKs send it.
      headers['x-api-key'] = gatewayToken;
    } else if (fuzz.authenticated) {
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
      misshapen:
        fuzz.target === 'edge' &&
        fuzz.path.startsWith('/v1') &&
        response.status >= 400 &&
        !hasErrorShape(fuzz.path, text),
    };
  }

  it(`answers ${RUNS} malformed requests without a 5xx, a stall or an error out of shape (seed ${SEED})`, async () => {
    const requests = fc.sample(
      fc.oneof({ weight: 4, arbitrary: request }, { weight: 1, arbitrary: apiRequestFor(models) }),
      { numRuns: RUNS, seed: SEED },
    );
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
    expect(outcomes.filter((o) => o.misshapen).map(describe)).toEqual([]);
    const sorted = outcomes.map((o) => o.ms).sort((a, b) => a - b);
    process.stdout.write(
      `fuzz: ${RUNS} requests, seed ${SEED}, p50 ${Math.round(sorted[Math.floor(RUNS / 2)]!)} ms, ` +
        `p99 ${Math.round(sorted[Math.floor(RUNS * 0.99)]!)} ms, max ${Math.round(sorted.at(-1)!)} ms\n`,
    );
    // How far the requests got on the routes in front of the conversions: answered, or refused.
    for (const path of ['/v1/messages', '/v1/messages/count_tokens', '/v1/responses']) {
      const statuses = new Map<number, number>();
      for (const { request, status } of outcomes)
        if (request.path === path) statuses.set(status, (statuses.get(status) ?? 0) + 1);
      const counts = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`);
      process.stdout.write(`fuzz: ${path}: ${counts.join(', ')}\n`);
    }

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
