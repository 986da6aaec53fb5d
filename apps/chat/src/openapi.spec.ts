import { resetChatData, startChat, type ChatHarness } from './testing/chat-harness.fixture.js';

// The endpoints the web app relies on (issue 6, "Contract"), as the OpenAPI document
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

  it('serves the browsable page', async () => {
    const page = await chat.api.get('/api/docs').redirects(1).expect(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.text).toContain('swagger');
  });
});
