import { AdminHarness, type Session } from './testing/admin-harness.fixture.js';

// Input a client (or an attacker) can send that once cost a 500 or seconds of CPU: each
// is a 400 naming the field (docs/architecture.md, "Bad input").

interface ErrorBody {
  error: { code: string; message: string; fields?: { field: string; message: string }[] };
}

function fieldsOf(body: unknown): string[] {
  return ((body as ErrorBody).error.fields ?? []).map((f) => f.field);
}

describe('bad input to the admin API', () => {
  let h: AdminHarness;
  let owner: Session;

  beforeAll(async () => {
    h = await AdminHarness.start({ name: 'badinput' });
    owner = await h.session('owner');
  });

  afterAll(async () => {
    await h.close();
  });

  describe('before any session, on the login route', () => {
    // Credentials are a few short fields: larger bodies are refused by their size before
    // anything parses them (CREDENTIALS_BODY_LIMIT).
    it.each([
      ['an array of 50,000 zeros', new Array(50_000).fill(0)],
      [
        'an object of 50,000 keys',
        Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, 0])),
      ],
      ['a username of 50,000 items', { username: new Array(50_000).fill(0), password: 'x' }],
      [
        'a body nested 20,000 levels deep',
        '{"username":'.repeat(20_000) + '"x"' + '}'.repeat(20_000),
      ],
    ])('refuses %s by its size with a 413', async (_label, body) => {
      const response = await h
        .api(undefined, '198.18.7.1')
        .post('/api/auth/login')
        .set('content-type', 'application/json')
        .send(typeof body === 'string' ? body : JSON.stringify(body))
        .expect(413);
      expect(response.body.error.code).toBe('payload_too_large');
    });

    it('refuses a small body of 1,500 keys by their count with a 400', async () => {
      const keys = Object.fromEntries(Array.from({ length: 1_500 }, (_, i) => [`k${i}`, 0]));
      const response = await h
        .api(undefined, '198.18.7.2')
        .post('/api/auth/login', keys)
        .expect(400);
      expect(response.body.error.code).toBe('validation_failed');
      expect(fieldsOf(response.body)).toEqual(['body']);
    });
  });

  it.each([
    ['a channel name with NUL', '/api/channels', { name: 'a\u0000b' }, 'name'],
    [
      'a token name with NUL',
      '/api/tokens',
      { name: 'x\u0000', expiresAt: null, quota: null },
      'name',
    ],
    [
      'a token name with a lone surrogate',
      '/api/tokens',
      { name: '\ud800', expiresAt: null, quota: null },
      'name',
    ],
  ])('refuses %s with a 400 naming it', async (_label, path, body, field) => {
    const response = await h.api(owner.token).post(path, body).expect(400);
    expect(fieldsOf(response.body)).toContain(field);
  });

  it('refuses a price model with a lone surrogate, naming its row', async () => {
    const response = await h
      .api(owner.token)
      .put('/api/prices', { items: [{ model: '\udc00x', inputPrice: 1, outputPrice: 1 }] })
      .expect(400);
    expect(fieldsOf(response.body)).toEqual(['items[0].model']);
  });

  it.each([
    ['/api/prices/%00', 'model'],
    ['/api/audit?action=%00', 'action'],
    ['/api/audit?targetId=a%00b', 'targetId'],
    ['/api/usage/logs?model=%00', 'model'],
  ])('refuses NUL in %s, naming %s', async (path, field) => {
    const call = path.startsWith('/api/prices/')
      ? h.api(owner.token).delete(path)
      : h.api(owner.token).get(path);
    const response = await call.expect(400);
    expect(fieldsOf(response.body)).toContain(field);
  });

  it.each([
    ['/api/usage/logs?tokenId=99999999999', 'tokenId'],
    ['/api/usage/logs?channelId=9007199254740993', 'channelId'],
    ['/api/usage/summary?groupBy=day&tokenId=2147483648', 'tokenId'],
    ['/api/usage/summary?groupBy=day&channelId=1e300', 'channelId'],
    ['/api/audit?actorId=99999999999', 'actorId'],
    ['/api/audit?page=1e400', 'page'],
    ['/api/tokens?page=99999999999999999999', 'page'],
  ])('refuses %s (past the column type) with a 400 naming %s', async (path, field) => {
    const response = await h.api(owner.token).get(path).expect(400);
    expect(fieldsOf(response.body)).toContain(field);
  });

  it('refuses null for PATCH fields that cannot be null, naming each', async () => {
    const admin = await h.createAdmin('viewer');
    const role = await h
      .api(owner.token)
      .patch(`/api/admins/${admin.id}`, { role: null })
      .expect(400);
    expect(fieldsOf(role.body)).toEqual(['role']);
    const both = await h
      .api(owner.token)
      .patch(`/api/admins/${admin.id}`, { disabled: null, password: null })
      .expect(400);
    expect([...new Set(fieldsOf(both.body))].sort()).toEqual(['disabled', 'password']);

    const token = await h
      .api(owner.token)
      .post('/api/tokens', { name: 'nullable-check', expiresAt: null, quota: null })
      .expect(201);
    const name = await h
      .api(owner.token)
      .patch(`/api/tokens/${token.body.id}`, { name: null, version: token.body.version })
      .expect(400);
    expect(fieldsOf(name.body)).toContain('name');
    // What may be null still may be.
    await h
      .api(owner.token)
      .patch(`/api/tokens/${token.body.id}`, { quota: null, version: token.body.version })
      .expect(200);
  });
});
