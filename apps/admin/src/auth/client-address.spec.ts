import request from 'supertest';
import { AdminHarness, PASSWORD } from '../testing/admin-harness.fixture.js';

// The client address that login throttling and the audit log see is Fastify's `request.ip`:
// X-Forwarded-For is believed only when the direct peer is one of TRUSTED_PROXIES, and then
// the right-most hop that is not a trusted proxy is the client. The tests connect from
// loopback, as the edge does. A first delay of ten minutes keeps an address that reached its
// free failures waiting for the whole test, however slow the machine.

describe('X-Forwarded-For from a trusted proxy', () => {
  let h: AdminHarness;

  beforeAll(async () => {
    h = await AdminHarness.start({
      name: 'xff',
      env: {
        TRUSTED_PROXIES: '127.0.0.1/32,::1/128,10.0.0.0/8',
        LOGIN_MAX_FAILURES_PER_IP: '3',
        LOGIN_FIRST_DELAY_SECONDS: '600',
      },
    });
  });

  afterAll(async () => {
    await h.close();
  });

  /** Fails a login with this X-Forwarded-For; the client address the audit log recorded. */
  async function recordedAddress(forwardedFor?: string): Promise<string | null> {
    const admin = await h.createAdmin('viewer');
    const attempt = request(h.url).post('/api/auth/login');
    if (forwardedFor !== undefined) void attempt.set('x-forwarded-for', forwardedFor);
    await attempt.send({ username: admin.username, password: 'wrong password' }).expect(401);
    const [row] = await h.auditOf('admin', admin.id);
    return row?.clientIp ?? null;
  }

  it('is believed: the client is the address the proxy reports', async () => {
    expect(await recordedAddress('198.51.100.7')).toBe('198.51.100.7');
    expect(await recordedAddress('2001:db8::7')).toBe('2001:db8::7');
    expect(await recordedAddress()).toBe('127.0.0.1');
  });

  it('is read from the right: the right-most untrusted hop wins, whatever a client forged', async () => {
    // The client sent "X-Forwarded-For: 203.0.113.66"; its proxy, then one of ours, appended.
    expect(await recordedAddress('203.0.113.66, 198.51.100.8, 10.0.0.5')).toBe('198.51.100.8');
    // Only trusted hops: the farthest one is the client.
    expect(await recordedAddress('10.0.0.9, 10.0.0.5')).toBe('10.0.0.9');
  });

  it('throttles that client, not the addresses it forged', async () => {
    for (const forged of ['203.0.113.70', '203.0.113.71', '203.0.113.72']) {
      await h
        .api(undefined, `${forged}, 198.51.100.60, 10.0.0.5`)
        .post('/api/auth/login', { username: `ghost-${forged}`, password: 'x' })
        .expect(401);
    }
    const admin = await h.createAdmin('viewer');
    const login = { username: admin.username, password: PASSWORD };
    const locked = await h.api(undefined, '198.51.100.60').post('/api/auth/login', login);
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe('too_many_attempts');
    await h.api(undefined, '203.0.113.70').post('/api/auth/login', login).expect(200);
  });
});

describe('X-Forwarded-For from a peer that is not a trusted proxy', () => {
  let h: AdminHarness;

  beforeAll(async () => {
    // Loopback (where the test connects from) is not trusted here.
    h = await AdminHarness.start({
      name: 'untrusted',
      env: {
        TRUSTED_PROXIES: '10.0.0.0/8',
        LOGIN_MAX_FAILURES_PER_IP: '3',
        LOGIN_FIRST_DELAY_SECONDS: '600',
      },
    });
  });

  afterAll(async () => {
    await h.close();
  });

  it('is ignored: throttling and audit see the peer address', async () => {
    const admin = await h.createAdmin('viewer');
    const guessedAt: number[] = [];
    for (const forged of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
      const other = await h.createAdmin('viewer');
      guessedAt.push(other.id);
      await h
        .api(undefined, forged)
        .post('/api/auth/login', { username: other.username, password: 'x' })
        .expect(401);
    }
    const locked = await h
      .api(undefined, '203.0.113.4')
      .post('/api/auth/login', { username: admin.username, password: PASSWORD })
      .expect(429);
    expect(locked.body.error.code).toBe('too_many_attempts');
    const rows = await Promise.all(guessedAt.map((id) => h.auditOf('admin', id)));
    expect(rows.flat().map((r) => r.clientIp)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);
  });
});
