import { AdminHarness, randomSuffix, type Session } from '../testing/admin-harness.fixture.js';

describe('audit log', () => {
  let h: AdminHarness;
  let owner: Session;
  let admin: Session;

  beforeAll(async () => {
    h = await AdminHarness.start({ name: 'audit' });
    owner = await h.session('owner');
    admin = await h.session('admin');
  });

  afterAll(async () => {
    await h.close();
  });

  it('records who changed what, from where, newest first, without secrets', async () => {
    const api = h.api(admin.token, '203.0.113.50');
    const token = (
      await api
        .post('/api/tokens', { name: `audited-${randomSuffix()}`, expiresAt: null, quota: 10 })
        .expect(201)
    ).body as { id: number; key: string };
    await api.patch(`/api/tokens/${token.id}`, { version: 1, quota: 20 }).expect(200);
    await api.delete(`/api/tokens/${token.id}`).expect(204);

    const entries = await h
      .api(owner.token)
      .get(`/api/audit?targetType=token&targetId=${token.id}`)
      .expect(200);
    expect(entries.body.total).toBe(3);
    expect(entries.body.items).toEqual([
      expect.objectContaining({ action: 'token.delete', actorId: admin.id }),
      expect.objectContaining({
        action: 'token.update',
        details: { quota: { from: 10, to: 20 } },
      }),
      expect.objectContaining({
        id: expect.any(Number),
        action: 'token.create',
        actorId: admin.id,
        actorName: admin.username,
        targetType: 'token',
        targetId: String(token.id),
        clientIp: '203.0.113.50',
        createdAt: expect.any(String),
      }),
    ]);
    expect(entries.text).not.toContain(token.key);
  });

  it('filters by action, actor and time, and pages', async () => {
    const since = new Date().toISOString();
    const api = h.api(admin.token);
    for (let i = 0; i < 3; i += 1) {
      await api
        .post('/api/tokens', { name: `paged-${i}`, expiresAt: null, quota: null })
        .expect(201);
    }
    const query = `action=token.create&actorId=${admin.id}&from=${since}`;
    const all = await h.api(owner.token).get(`/api/audit?${query}`).expect(200);
    expect(all.body.total).toBe(3);
    const page = await h.api(owner.token).get(`/api/audit?${query}&pageSize=2&page=2`).expect(200);
    expect(page.body.items).toHaveLength(1);
    expect(page.body.items[0].details.name).toBe('paged-0');
    const before = await h
      .api(owner.token)
      .get(`/api/audit?action=token.create&actorId=${admin.id}&to=${since}`)
      .expect(200);
    expect(before.body.items.every((e: { createdAt: string }) => e.createdAt < since)).toBe(true);
    await h.api(admin.token).get('/api/audit').expect(200);
    const viewer = await h.session('viewer');
    await h.api(viewer.token).get('/api/audit').expect(403);
  });
});
