import { AdminHarness } from '../testing/admin-harness.fixture.js';

// With Redis unreachable, sign-in cannot work: clients get 503 (retry later), not a 500.

describe('with Redis unreachable', () => {
  let h: AdminHarness;

  beforeAll(async () => {
    h = await AdminHarness.start({
      name: 'outage',
      env: { REDIS_URL: 'redis://127.0.0.1:1' },
    });
  });

  afterAll(async () => {
    await h.close();
  });

  it('is not ready, and answers sign-in and session checks with 503', async () => {
    const readiness = await h.api().get('/readyz').expect(503);
    expect(readiness.body.checks.redis.status).toBe('unavailable');
    const admin = await h.createAdmin('viewer');
    const login = await h
      .api()
      .post('/api/auth/login', { username: admin.username, password: 'whatever it is' })
      .expect(503);
    expect(login.body.error.code).toBe('service_unavailable');
    const session = await h
      .api(`sess-${'a'.repeat(43)}`)
      .get('/api/channels')
      .expect(503);
    expect(session.body.error.code).toBe('service_unavailable');
    expect(h.logs.join('\n')).toContain('Redis unreachable');
  });
});
