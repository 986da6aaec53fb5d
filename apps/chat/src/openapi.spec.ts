import { resetChatData, startChat, type ChatHarness } from './testing/chat-harness.fixture.js';

// The endpoints the web app relies on (docs/specification.md, "Endpoints"), as the OpenAPI document
// describes them: a route missing or renamed fails here first.

const CONTRACT: [string, string][] = [
  ['post', '/api/auth/register'],
  ['post', '/api/auth/login'],
  ['post', '/api/auth/logout'],
  ['get', '/api/auth/me'],
  ['get', '/api/models'],
  ['post', '/api/models/from-link'],
  ['get', '/api/usage'],
  ['get', '/api/usage/daily'],
  ['get', '/api/conversations'],
  ['post', '/api/conversations'],
  ['get', '/api/conversations/{id}'],
  ['patch', '/api/conversations/{id}'],
  ['delete', '/api/conversations/{id}'],
  ['get', '/api/conversations/{id}/messages'],
  ['post', '/api/conversations/{id}/messages'],
  ['post', '/api/attachments'],
  ['get', '/api/attachments/limits'],
  ['get', '/api/attachments/{id}'],
  ['get', '/api/admin/api-keys'],
  ['post', '/api/admin/api-keys'],
  ['get', '/api/admin/api-keys/{id}'],
  ['patch', '/api/admin/api-keys/{id}'],
  ['delete', '/api/admin/api-keys/{id}'],
  ['get', '/api/admin/models'],
  ['post', '/api/admin/models'],
  ['patch', '/api/admin/models/{id}'],
  ['delete', '/api/admin/models/{id}'],
  ['get', '/api/admin/users'],
  ['patch', '/api/admin/users/{id}'],
  ['get', '/api/admin/edition'],
  ['post', '/api/admin/edition/activate'],
];

describe('OpenAPI', () => {
  let chat: ChatHarness;

  beforeAll(async () => {
    await resetChatData();
    chat = await startChat();
  });

  afterAll(async () => {
    await chat.close();
  });

  it('describes every endpoint of the contract, with bearer auth', async () => {
    const response = await chat.api.get('/api/docs-json').expect(200);
    const document = response.body as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: {
        securitySchemes: Record<string, { scheme?: string }>;
        schemas: Record<string, unknown>;
      };
    };
    expect(document.openapi).toMatch(/^3\./);
    const described = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method} ${path}`),
    );
    expect(described).toEqual(expect.arrayContaining(CONTRACT.map(([m, p]) => `${m} ${p}`)));
    expect(Object.values(document.components.securitySchemes)).toContainEqual(
      expect.objectContaining({ scheme: 'bearer' }),
    );
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining([
        'CreateApiKeyDto',
        'ApiKeyResponse',
        'SendMessageDto',
        'EditionResponse',
      ]),
    );
  });

  it('answers every list as {items, total}', async () => {
    type Schema = { $ref?: string; type?: string; properties?: Record<string, Schema> };
    const document = (await chat.api.get('/api/docs-json').expect(200)).body as {
      paths: Record<string, { get?: { responses: Record<string, { content?: unknown }> } }>;
      components: { schemas: Record<string, Schema> };
    };
    const resolve = (schema: Schema): Schema =>
      schema.$ref ? document.components.schemas[schema.$ref.split('/').at(-1)!]! : schema;
    const answers = Object.entries(document.paths).flatMap(([path, methods]) => {
      const content = methods.get?.responses['200']?.content as
        Record<string, { schema: Schema }> | undefined;
      const schema = content?.['application/json']?.schema;
      return schema ? [{ path, schema: resolve(schema) }] : [];
    });
    const lists = answers.filter(({ schema }) => schema.properties?.['items']);
    expect(answers.filter(({ schema }) => schema.type === 'array')).toEqual([]);
    expect(lists.map(({ path }) => path)).toEqual(
      expect.arrayContaining([
        '/api/models',
        '/api/conversations',
        '/api/conversations/{id}/messages',
        '/api/mcp-servers',
        '/api/admin/models',
        '/api/admin/api-keys',
        '/api/admin/mcp-servers',
        '/api/admin/users',
      ]),
    );
    for (const { schema } of lists) {
      expect(schema.properties?.['items']?.type).toBe('array');
      expect(schema.properties?.['total']?.type).toBe('number');
    }
  });

  it('serves the browsable page', async () => {
    const page = await chat.api.get('/api/docs').redirects(1).expect(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.text).toContain('swagger');
  });
});
