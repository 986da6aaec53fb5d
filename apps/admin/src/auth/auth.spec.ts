import { NestFactory } from '@nestjs/core';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { sha256Hex } from '@switchyard/security';
import { createTestDatabase, query } from '@switchyard/testing';
import { CliModule } from '../cli/cli.module.js';
import { COMMANDS } from '../cli/commands.js';
import { AdminHarness, PASSWORD } from '../testing/admin-harness.fixture.js';

// Administrators' sessions as the dashboard uses them, against real Postgres and Redis.

describe('authentication', () => {
  let h: AdminHarness;

  beforeAll(async () => {
    h = await AdminHarness.start({ name: 'auth' });
  });

  afterAll(async () => {
    await h.close();
  });

  it('refuses requests without a valid session with 401 and a Bearer challenge', async () => {
    for (const token of [undefined, 'sess-notavalidtoken', `sess-${'A'.repeat(43)}`]) {
      const response = await h.api(token).get('/api/channels').expect(401);
      expect(response.body.error.code).toBe('unauthenticated');
      expect(response.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('answers bad credentials with 401 invalid_credentials, the same for unknown users', async () => {
    const admin = await h.createAdmin('viewer');
    const wrong = await h
      .api(undefined, '198.18.0.1')
      .post('/api/auth/login', { username: admin.username, password: 'wrong password' })
      .expect(401);
    const unknown = await h
      .api(undefined, '198.18.0.1')
      .post('/api/auth/login', { username: 'nobody-here', password: 'wrong password' })
      .expect(401);
    expect(wrong.body.error).toEqual(unknown.body.error);
    expect(wrong.body.error.code).toBe('invalid_credentials');
  });

  it('forces the first password change before anything else works', async () => {
    const admin = await h.createAdmin('owner', { mustChangePassword: true });
    const login = await h
      .api()
      .post('/api/auth/login', { username: admin.username, password: PASSWORD })
      .expect(200);
    expect(login.body).toMatchObject({ mustChangePassword: true, admin: { role: 'owner' } });
    expect(login.body.token).toMatch(/^sess-/);
    const api = h.api(login.body.token);

    for (const call of [
      api.get('/api/channels'),
      api.get('/api/auth/me'),
      api.post('/api/tokens', { name: 'x', expiresAt: null, quota: null }),
      api.get('/api/admins'),
    ]) {
      const refused = await call.expect(403);
      expect(refused.body.error.code).toBe('password_change_required');
    }

    const wrongCurrent = await api
      .post('/api/auth/password', { currentPassword: 'not it', newPassword: 'a new long password' })
      .expect(400);
    expect(wrongCurrent.body.error.fields).toEqual([
      expect.objectContaining({ field: 'currentPassword' }),
    ]);
    const tooShort = await api
      .post('/api/auth/password', { currentPassword: PASSWORD, newPassword: 'short' })
      .expect(400);
    expect(tooShort.body.error.fields.map((f: { field: string }) => f.field)).toEqual([
      'newPassword',
    ]);
    const same = await api
      .post('/api/auth/password', { currentPassword: PASSWORD, newPassword: PASSWORD })
      .expect(400);
    expect(same.body.error.fields[0].field).toBe('newPassword');

    await api
      .post('/api/auth/password', { currentPassword: PASSWORD, newPassword: 'a new long password' })
      .expect(200);
    await api.get('/api/channels').expect(200);
    await api.get('/api/auth/me').expect(200, {
      id: admin.id,
      username: admin.username,
      role: 'owner',
      mustChangePassword: false,
    });
    const again = await h
      .api()
      .post('/api/auth/login', { username: admin.username, password: 'a new long password' })
      .expect(200);
    expect(again.body.mustChangePassword).toBe(false);
  });

  it('logout ends only that session', async () => {
    const admin = await h.createAdmin('viewer');
    const first = await h.login(admin.username);
    const second = await h.login(admin.username);
    await h.api(first).post('/api/auth/logout').expect(204);
    await h.api(first).get('/api/channels').expect(401);
    await h.api(second).get('/api/channels').expect(200);
    const rows = await h.auditOf('admin', admin.id);
    expect(rows.map((r) => r.action)).toEqual(['auth.login', 'auth.login', 'auth.logout']);
  });

  it('logout everywhere ends every session of that administrator, this one too', async () => {
    const admin = await h.createAdmin('viewer');
    const first = await h.login(admin.username);
    const second = await h.login(admin.username);
    const other = await h.createAdmin('viewer');
    const bystander = await h.login(other.username);
    const ended = await h.api(first).post('/api/auth/logout-everywhere').expect(200);
    expect(ended.body).toEqual({ revokedSessions: 2 });
    await h.api(first).get('/api/channels').expect(401);
    await h.api(second).get('/api/channels').expect(401);
    await h.api(bystander).get('/api/channels').expect(200);
    const rows = await h.auditOf('admin', admin.id);
    expect(rows.at(-1)).toMatchObject({
      action: 'auth.logout_everywhere',
      details: { revokedSessions: 2 },
    });
  });

  it('a password change ends every other session and retires the old password', async () => {
    const admin = await h.createAdmin('admin');
    const current = await h.login(admin.username);
    const other = await h.login(admin.username);
    const changed = await h
      .api(current)
      .post('/api/auth/password', {
        currentPassword: PASSWORD,
        newPassword: 'another long password',
      })
      .expect(200);
    expect(changed.body).toEqual({ revokedSessions: 1 });
    await h.api(other).get('/api/channels').expect(401);
    await h.api(current).get('/api/channels').expect(200);
    await h
      .api()
      .post('/api/auth/login', { username: admin.username, password: PASSWORD })
      .expect(401);
    await h.login(admin.username, 'another long password');
  });

  it('keeps sessions in Redis only as hashes, with the configured time to live', async () => {
    const admin = await h.createAdmin('viewer');
    const token = await h.login(admin.username);
    const redis = h.app.get<RedisClient>(REDIS);
    const key = `admin:{sessions}:session:${sha256Hex(token)}`;
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(h.env.SESSION_TTL_SECONDS - 60);
    expect(ttl).toBeLessThanOrEqual(h.env.SESSION_TTL_SECONDS);
    expect(await redis.get(key)).not.toContain(token);
    // Expiry is Redis's: once the key is gone the session is.
    await redis.del(key);
    await h.api(token).get('/api/channels').expect(401);
  });

  it("an owner's change of role or disable ends that administrator's sessions", async () => {
    const owner = await h.session('owner');
    const target = await h.createAdmin('admin');
    const token = await h.login(target.username);
    await h.api(token).get('/api/channels').expect(200);
    await h.api(owner.token).patch(`/api/admins/${target.id}`, { role: 'viewer' }).expect(200);
    await h.api(token).get('/api/channels').expect(401);

    const viewerToken = await h.login(target.username);
    await h
      .api(viewerToken)
      .put('/api/prices', { items: [] })
      .expect(403)
      .expect((r) => expect(r.body.error.code).toBe('forbidden'));
    await h.api(owner.token).patch(`/api/admins/${target.id}`, { disabled: true }).expect(200);
    await h.api(viewerToken).get('/api/channels').expect(401);
    const refused = await h
      .api()
      .post('/api/auth/login', { username: target.username, password: PASSWORD })
      .expect(403);
    expect(refused.body.error.code).toBe('forbidden');
  });
});

describe('owners', () => {
  it('keep one enabled owner, and may not delete themselves', async () => {
    const database = await createTestDatabase();
    const h = await AdminHarness.start({ name: 'owners', databaseUrl: database.url });
    try {
      const owner = await h.session('owner');
      const second = await h.createAdmin('owner');
      await h
        .api(owner.token)
        .delete(`/api/admins/${owner.id}`)
        .expect(409)
        .expect((r) => expect(r.body.error.code).toBe('conflict'));
      await h.api(owner.token).patch(`/api/admins/${second.id}`, { role: 'admin' }).expect(200);
      const demote = await h
        .api(owner.token)
        .patch(`/api/admins/${owner.id}`, { role: 'viewer' })
        .expect(409);
      expect(demote.body.error.message).toMatch(/owner must remain/);
      await h.api(owner.token).patch(`/api/admins/${owner.id}`, { disabled: true }).expect(409);
      // Refused changes are rolled back whole: still an enabled owner, still logged in.
      await h.api(owner.token).get('/api/auth/me').expect(200);
      await h.api(owner.token).delete(`/api/admins/${second.id}`).expect(204);
      await h.api(owner.token).get(`/api/admins/${second.id}`).expect(404);
      const actions = await query<{ action: string }>(
        database.url,
        `SELECT action FROM "AuditLog" WHERE "targetType" = 'admin' AND "targetId" = $1 ORDER BY id`,
        [String(second.id)],
      );
      expect(actions.map((a) => a.action)).toEqual(['admin.update', 'admin.delete']);
    } finally {
      await h.close();
      await database.drop();
    }
  });
});

describe('login throttling', () => {
  let h: AdminHarness;

  beforeAll(async () => {
    // A first delay of ten minutes: an address past its free failures stays refused for the
    // whole test, however slow the machine (the doubling itself is libs/auth's spec, on a
    // clock it moves). A low ceiling shows the backstop and the way back in.
    h = await AdminHarness.start({
      name: 'throttle',
      env: { LOGIN_FIRST_DELAY_SECONDS: '600', LOGIN_ACCOUNT_CEILING: '12' },
    });
  });

  afterAll(async () => {
    await h.close();
  });

  const attempt = (username: string, password: string, clientIp: string) =>
    h.api(undefined, clientIp).post('/api/auth/login', { username, password });

  /** Runs an admin CLI command against this harness's database and Redis. */
  async function cli(args: string[], input = '') {
    const context = await NestFactory.createApplicationContext(CliModule.forRoot(h.env), {
      logger: false,
    });
    const out: string[] = [];
    try {
      const [name, ...rest] = args;
      await COMMANDS[name!]!(context, rest, {
        out: (line) => out.push(line),
        err: () => undefined,
        input: () => Promise.resolve(input),
      });
    } finally {
      await context.close();
    }
    return out;
  }

  it('slows down the address that failed 5 times, and lets the owner in from another', async () => {
    const admin = await h.createAdmin('viewer');
    for (let i = 0; i < 5; i += 1) {
      await attempt(admin.username, 'wrong password', '192.0.2.10').expect(401);
    }
    const delayed = await attempt(admin.username, PASSWORD, '192.0.2.10').expect(429);
    expect(delayed.body.error).toEqual({
      code: 'too_many_attempts',
      message: expect.stringMatching(/^Too many failed sign-in attempts; try again in \d+ /),
    });
    const retryAfter = Number(delayed.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(600);
    // The owner, elsewhere, during the attacker's delay.
    await attempt(admin.username, PASSWORD, '192.0.2.99').expect(200);
    // Still delayed where the failures came from, the owner's success notwithstanding.
    await attempt(admin.username, PASSWORD, '192.0.2.10').expect(429);

    // The address is not slowed down for other accounts.
    const other = await h.createAdmin('viewer');
    await attempt(other.username, PASSWORD, '192.0.2.10').expect(200);

    const failures = await h.auditOf('admin', admin.id);
    expect(failures.filter((r) => r.action === 'auth.login_failed')).toHaveLength(5);
    expect(failures[0]?.clientIp).toBe('192.0.2.10');
  });

  it('answers a name nobody has exactly as an account that exists', async () => {
    const admin = await h.createAdmin('viewer');
    for (let i = 0; i < 5; i += 1) {
      await attempt(admin.username, 'wrong password', '192.0.2.11').expect(401);
      await attempt('nobody-at-all', 'wrong password', '192.0.2.12').expect(401);
    }
    const known = await attempt(admin.username, 'wrong password', '192.0.2.11').expect(429);
    const unknown = await attempt('nobody-at-all', 'wrong password', '192.0.2.12').expect(429);
    expect(unknown.body).toEqual(known.body);
  });

  it('slows down an address after 20 failures over any accounts, and only that address', async () => {
    for (let i = 0; i < 20; i += 1) {
      await attempt(`someone-${i}`, 'wrong password', '192.0.2.20').expect(401);
    }
    const admin = await h.createAdmin('viewer');
    const delayed = await attempt(admin.username, PASSWORD, '192.0.2.20').expect(429);
    expect(delayed.body.error.code).toBe('too_many_attempts');
    expect(Number(delayed.headers['retry-after'])).toBeGreaterThan(0);
    // The edge reports a different client: that one is not slowed down.
    await attempt(admin.username, PASSWORD, '192.0.2.21').expect(200);
  });

  it('a success forgives the failures made from its address', async () => {
    const admin = await h.createAdmin('viewer');
    for (let i = 0; i < 4; i += 1) {
      await attempt(admin.username, 'wrong password', '192.0.2.30').expect(401);
    }
    await attempt(admin.username, PASSWORD, '192.0.2.30').expect(200);
    for (let i = 0; i < 4; i += 1) {
      await attempt(admin.username, 'wrong password', '192.0.2.30').expect(401);
    }
    await attempt(admin.username, PASSWORD, '192.0.2.30').expect(200);
  });

  it('refuses an account everywhere past its ceiling, until `unlock-login`', async () => {
    const admin = await h.createAdmin('viewer');
    // Guessing from many addresses, each within its free failures.
    for (let i = 0; i < 12; i += 1) {
      await attempt(admin.username, 'wrong password', `198.51.100.${i + 1}`).expect(401);
    }
    const refused = await attempt(admin.username, PASSWORD, '198.51.100.200').expect(429);
    expect(refused.body.error.code).toBe('too_many_attempts');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(86_000);
    expect(await cli(['unlock-login', '--username', admin.username])).toEqual([
      `failed sign-ins of "${admin.username}" (admin) forgotten`,
    ]);
    await attempt(admin.username, PASSWORD, '198.51.100.200').expect(200);
  });

  it('a password reset by the CLI or an owner forgives every failure on the account', async () => {
    const owner = await h.session('owner');
    for (const reset of ['cli', 'api'] as const) {
      const admin = await h.createAdmin('viewer');
      for (let i = 0; i < 12; i += 1) {
        await attempt(admin.username, 'wrong password', `198.51.101.${i + 1}`).expect(401);
      }
      const password = `a fresh password ${reset}`;
      if (reset === 'cli') {
        expect(
          await cli(['reset-password', '--username', admin.username], `${password}\n`),
        ).toEqual([`password of "${admin.username}" reset; it must be changed at next sign-in`]);
      } else {
        await h.api(owner.token).patch(`/api/admins/${admin.id}`, { password }).expect(200);
      }
      const login = await attempt(admin.username, password, '198.51.101.200').expect(200);
      expect(login.body.mustChangePassword).toBe(true);
      await attempt(admin.username, PASSWORD, '198.51.101.201').expect(401);
    }
  });

  it('wrong current passwords on a password change count as failed sign-ins', async () => {
    const admin = await h.createAdmin('viewer');
    const token = await h.login(admin.username);
    for (let i = 0; i < 5; i += 1) {
      await h
        .api(token)
        .post('/api/auth/password', {
          currentPassword: 'guess',
          newPassword: 'a new long password',
        })
        .expect(400);
    }
    await h
      .api(token)
      .post('/api/auth/password', { currentPassword: PASSWORD, newPassword: 'a new long password' })
      .expect(429);
    // The same account from another address is not slowed down.
    await attempt(admin.username, PASSWORD, '192.0.2.40').expect(200);
  });
});

describe('the first administrator', () => {
  it('is created once, as an owner who must change the password, by replicas starting together', async () => {
    const database = await createTestDatabase();
    const env = { ADMIN_USERNAME: 'first-owner', ADMIN_PASSWORD: 'initial-password-1' };
    const replicas = await Promise.all(
      ['boot-a', 'boot-b', 'boot-c'].map((name) =>
        AdminHarness.start({ name, env, databaseUrl: database.url }),
      ),
    );
    try {
      const rows = await query<{ username: string; role: string; mustChangePassword: boolean }>(
        database.url,
        `SELECT username, role, "mustChangePassword" FROM "AdminUser"`,
      );
      expect(rows).toEqual([{ username: 'first-owner', role: 'owner', mustChangePassword: true }]);
      const created = replicas.filter((r) =>
        r.logs.some((line) => line.includes('created the first gateway administrator')),
      );
      expect(created).toHaveLength(1);
      for (const replica of replicas) {
        expect(replica.logs.join('\n')).not.toContain('initial-password-1');
      }
      const [replica] = replicas;
      const login = await replica!
        .api()
        .post('/api/auth/login', { username: 'first-owner', password: 'initial-password-1' })
        .expect(200);
      expect(login.body.mustChangePassword).toBe(true);
      const audit = await query<{ action: string; actorName: string }>(
        database.url,
        `SELECT action, "actorName" FROM "AuditLog" WHERE action = 'admin.bootstrap'`,
      );
      expect(audit).toEqual([{ action: 'admin.bootstrap', actorName: 'system' }]);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
      await database.drop();
    }
  });

  it('is not created when the variables are unset, and says so', async () => {
    const database = await createTestDatabase();
    const h = await AdminHarness.start({ name: 'boot-none', databaseUrl: database.url });
    try {
      const rows = await query(database.url, `SELECT id FROM "AdminUser"`);
      expect(rows).toHaveLength(0);
      expect(h.logs.join('\n')).toContain('nobody can log in');
    } finally {
      await h.close();
      await database.drop();
    }
  });
});
