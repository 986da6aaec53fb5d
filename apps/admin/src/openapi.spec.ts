import { AdminHarness } from './testing/admin-harness.fixture.js';

interface Operation {
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
}

describe('OpenAPI document', () => {
  let h: AdminHarness;

  beforeAll(async () => {
    h = await AdminHarness.start({ name: 'openapi' });
  });

  afterAll(async () => {
    await h.close();
  });

  it('documents every admin route, with its security, at /api/docs-json', async () => {
    const response = await h.api().get('/api/docs-json').expect(200);
    const document = response.body as {
      openapi: string;
      info: { title: string };
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(document.openapi).toMatch(/^3\./);
    expect(document.info.title).toContain('admin');

    const served = h.routes
      .filter((r) => r.url.startsWith('/api/') && !r.url.startsWith('/api/docs'))
      .filter((r) => r.method !== 'HEAD')
      .map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}')}`);
    const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual([...new Set(served)].sort());
    expect(Object.keys(document.paths).some((p) => !p.startsWith('/api/'))).toBe(false);

    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const isLogin = path === '/api/auth/login';
        expect([method, path, Boolean(operation.security?.length)]).toEqual([
          method,
          path,
          !isLogin,
        ]);
      }
    }
    const token = document.components.schemas.CreatedTokenResponse?.properties ?? {};
    expect(Object.keys(token)).toEqual(expect.arrayContaining(['key', 'lastFour', 'quota']));
    const key = document.components.schemas.ChannelKeyResponse?.properties ?? {};
    expect(Object.keys(key).sort()).toEqual([
      'createdAt',
      'id',
      'lastFour',
      'limits',
      'requestCount',
      'status',
      'statusReason',
      'usedQuota',
    ]);
  });

  it('serves Swagger UI at /api/docs', async () => {
    const response = await h.api().get('/api/docs').redirects(1).expect(200);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.text).toContain('swagger');
  });
});
