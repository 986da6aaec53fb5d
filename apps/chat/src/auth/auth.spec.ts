import { unlockLogin } from '@switchyard/auth';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { generateSecretKeySpec } from '@switchyard/security';
import { query, startApp } from '@switchyard/testing';
import {
  ADMIN,
  bearer,
  login,
  newUser,
  resetChatData,
  startChat,
  type ChatHarness,
} from '../testing/chat-harness.fixture.js';

describe('auth: register, login, sessions', () => {
  let chat: ChatHarness;
  let adminToken: string;

  beforeAll(async () => {
    await resetChatData();
    // Past its free failures an address waits ten minutes here, not the default second, so
    // the delay outlasts each test however slow the machine; the doubling is libs/auth's spec.
    chat = await startChat({
      LOGIN_MAX_FAILURES_PER_ACCOUNT: '3',
      LOGIN_MAX_FAILURES_PER_IP: '6',
      LOGIN_FIRST_DELAY_SECONDS: '600',
    });
    adminToken = await login(chat.api, ADMIN.username, ADMIN.password);
  });

  afterAll(async () => {
    await chat.close();
  });

  it('registers a user, case-insensitively, and refuses the same name or email again', async () => {
    const created = await chat.api
      .post('/api/auth/register')
      .send({ username: 'Alice', password: 'alice-password', email: 'Alice@Example.com' })
      .expect(201);
    expect(created.body).toMatchObject({
      username: 'alice',
      email: 'alice@example.com',
      role: 'user',
      modelPermissions: [],
    });
    expect(created.body).not.toHaveProperty('passwordHash');

    const again = await chat.api
      .post('/api/auth/register')
      .send({ username: 'ALICE', password: 'another-password' })
      .expect(409);
    expect(again.body.error.code).toBe('username_taken');
    const sameEmail = await chat.api
      .post('/api/auth/register')
      .send({ username: 'alice2', password: 'another-password', email: 'alice@example.com' })
      .expect(409);
    expect(sameEmail.body.error.code).toBe('email_taken');
  });

  it('refuses a bad registration, naming each bad field', async () => {
    const response = await chat.api
      .post('/api/auth/register')
      .send({ username: 'a b', password: 'short', role: 'admin' })
      .expect(400);
    expect(response.body.error.code).toBe('validation_failed');
    const fields = (response.body.error.fields as { field: string }[]).map((f) => f.field);
    expect(fields).toEqual(expect.arrayContaining(['username', 'password', 'role']));
  });

  it('logs in with a bearer token, shows the profile, and logs out', async () => {
    await chat.api
      .post('/api/auth/register')
      .send({ username: 'bob', password: 'bob-password' })
      .expect(201);
    const session = await chat.api
      .post('/api/auth/login')
      .send({ username: 'Bob', password: 'bob-password' })
      .expect(200);
    const token = session.body.token as string;
    expect(token).toMatch(/^sess-/);
    expect(Date.parse(session.body.expiresAt as string)).toBeGreaterThan(Date.now());

    const me = await chat.api.get('/api/auth/me').set(bearer(token)).expect(200);
    expect(me.body).toMatchObject({ username: 'bob', role: 'user' });

    await chat.api.post('/api/auth/logout').set(bearer(token)).expect(204);
    const after = await chat.api.get('/api/auth/me').set(bearer(token)).expect(401);
    expect(after.body.error.code).toBe('unauthenticated');
  });

  it('stores only the hash of a session token, with a TTL', async () => {
    const { token } = await newUser(chat.api);
    const { sha256Hex } = await import('@switchyard/security');
    const { Redis } = await import('ioredis');
    const redis = new Redis(process.env.REDIS_URL!);
    try {
      const key = `${process.env.REDIS_PREFIX}:chat:{sessions}:session:${sha256Hex(token)}`;
      expect(await redis.exists(key)).toBe(1);
      const ttl = await redis.ttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(chat.env.SESSION_TTL_SECONDS);
      const keys = await redis.keys(`${process.env.REDIS_PREFIX}:*`);
      const values = await Promise.all(
        keys.filter((k) => k.includes(':chat:{sessions}:session:')).map((k) => redis.get(k)),
      );
      expect(values.join(' ')).not.toContain(token);
    } finally {
      redis.disconnect();
    }
  });

  it('answers wrong passwords and unknown users alike', async () => {
    const headers = { 'x-forwarded-for': '198.51.100.1' };
    const wrong = await chat.api
      .post('/api/auth/login')
      .set(headers)
      .send({ username: 'bob', password: 'not-the-password' })
      .expect(401);
    const unknown = await chat.api
      .post('/api/auth/login')
      .set(headers)
      .send({ username: 'nobody-at-all', password: 'whatever-password' })
      .expect(401);
    expect(wrong.body).toEqual(unknown.body);
    expect(wrong.body.error.code).toBe('invalid_credentials');
  });

  it('delays the address that failed on a username, and lets the owner in from another', async () => {
    const { username } = await newUser(chat.api, 'victim');
    const from = { 'x-forwarded-for': '198.51.100.2' };
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await chat.api
        .post('/api/auth/login')
        .set(from)
        .send({ username, password: 'guess-guess' })
        .expect(401);
    }
    const blocked = await chat.api
      .post('/api/auth/login')
      .set(from)
      .send({ username, password: 'a-good-password' })
      .expect(429);
    expect(blocked.body.error.code).toBe('too_many_attempts');
    expect(blocked.body.error.message).toMatch(/try again in \d+ minute/);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // The owner, from elsewhere, during the attacker's delay.
    await chat.api
      .post('/api/auth/login')
      .set({ 'x-forwarded-for': '198.51.100.3' })
      .send({ username, password: 'a-good-password' })
      .expect(200);
    // A name nobody has is delayed just the same: the 429 tells nothing of who exists.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await chat.api
        .post('/api/auth/login')
        .set({ 'x-forwarded-for': '198.51.100.4' })
        .send({ username: 'nobody-by-this-name', password: 'guess-guess' })
        .expect(401);
    }
    const unknown = await chat.api
      .post('/api/auth/login')
      .set({ 'x-forwarded-for': '198.51.100.4' })
      .send({ username: 'nobody-by-this-name', password: 'guess-guess' })
      .expect(429);
    expect(unknown.body).toEqual(blocked.body);
  });

  it('lets the admin CLI forget the failures on a chat account', async () => {
    const { username } = await newUser(chat.api, 'unlocked');
    const from = { 'x-forwarded-for': '198.51.100.5' };
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await chat.api
        .post('/api/auth/login')
        .set(from)
        .send({ username, password: 'guess-guess' })
        .expect(401);
    }
    await chat.api
      .post('/api/auth/login')
      .set(from)
      .send({ username, password: 'a-good-password' })
      .expect(429);
    // What `cli.js unlock-login --app chat` does, on the chat service's Redis and prefix.
    const redis = chat.app.get<RedisClient>(REDIS);
    await unlockLogin(redis, 'chat', username.toUpperCase());
    await chat.api
      .post('/api/auth/login')
      .set(from)
      .send({ username, password: 'a-good-password' })
      .expect(200);
  });

  it('refuses logins from a client address after too many failures, and no other', async () => {
    const attacker = { 'x-forwarded-for': '203.0.113.50' };
    for (let attempt = 0; attempt < 6; attempt += 1) {
      await chat.api
        .post('/api/auth/login')
        .set(attacker)
        .send({ username: `guess-${attempt}`, password: 'guess-guess' })
        .expect(401);
    }
    const { username } = await newUser(chat.api);
    await chat.api
      .post('/api/auth/login')
      .set(attacker)
      .send({ username, password: 'a-good-password' })
      .expect(429);
    // The address counts only behind a trusted proxy; another client is not affected.
    await chat.api
      .post('/api/auth/login')
      .set({ 'x-forwarded-for': '203.0.113.51' })
      .send({ username, password: 'a-good-password' })
      .expect(200);
  });

  it('refuses a disabled user, ends their sessions, and lets them back when enabled', async () => {
    const user = await newUser(chat.api);
    await chat.api.get('/api/auth/me').set(bearer(user.token)).expect(200);

    await chat.api
      .patch(`/api/admin/users/${user.id}`)
      .set(bearer(adminToken))
      .send({ disabled: true })
      .expect(200);
    const ended = await chat.api.get('/api/auth/me').set(bearer(user.token)).expect(401);
    expect(ended.body.error.code).toBe('unauthenticated');
    const refused = await chat.api
      .post('/api/auth/login')
      .send({ username: user.username, password: 'a-good-password' })
      .expect(403);
    expect(refused.body.error.code).toBe('user_disabled');

    await chat.api
      .patch(`/api/admin/users/${user.id}`)
      .set(bearer(adminToken))
      .send({ disabled: false })
      .expect(200);
    await login(chat.api, user.username, 'a-good-password');
  });

  it('needs a session on /api routes and leaves probes open', async () => {
    for (const path of ['/api/auth/me', '/api/models', '/api/conversations', '/api/usage']) {
      const response = await chat.api.get(path).expect(401);
      expect(response.body.error.code).toBe('unauthenticated');
    }
    await chat.api.get('/api/auth/me').set(bearer('sess-forged')).expect(401);
    await chat.api.get('/api/auth/me').set({ authorization: 'Basic abc' }).expect(401);
    await chat.api.get('/healthz').expect(200);
    await chat.api.get('/readyz').expect(200);
    // Metrics are served on the operations port only.
    await chat.api.get('/metrics').expect(404);
  });

  it('keeps every /api/admin route, as OpenAPI lists them, for administrators', async () => {
    const docs = await chat.api.get('/api/docs-json').expect(200);
    const paths = docs.body.paths as Record<string, Record<string, unknown>>;
    const adminRoutes = Object.entries(paths)
      .filter(([path]) => path.startsWith('/api/admin/'))
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ path, method })));
    expect(adminRoutes.length).toBeGreaterThanOrEqual(12);
    const user = await newUser(chat.api);
    for (const { path, method } of adminRoutes) {
      const url = path.replace(/\{[^}]+\}/g, '1');
      const call = chat.api[method as 'get' | 'post' | 'patch' | 'delete'](url);
      const anonymous = await chat.api[method as 'get'](url);
      expect({ url, method, status: anonymous.status }).toEqual({ url, method, status: 401 });
      const response = await call.set(bearer(user.token)).send({});
      expect({ url, method, status: response.status }).toEqual({ url, method, status: 403 });
      expect(response.body.error.code).toBe('forbidden');
    }
  });
});

describe('auth: the first administrator', () => {
  it('is created once, even by instances starting together', async () => {
    await resetChatData();
    const instances = await Promise.all([startChat(), startChat(), startChat()]);
    try {
      const admins = await query(
        process.env.DATABASE_URL!,
        `SELECT username FROM "ChatUser" WHERE role = 'admin'`,
      );
      expect(admins).toEqual([{ username: ADMIN.username }]);
      const token = await login(instances[1].api, ADMIN.username, ADMIN.password);
      const me = await instances[2].api.get('/api/auth/me').set(bearer(token)).expect(200);
      expect(me.body.role).toBe('admin');
    } finally {
      await Promise.all(instances.map((instance) => instance.close()));
    }
  });

  it('is never made by promoting a user who registered under its name: the service refuses to start', async () => {
    await resetChatData();
    const first = await startChat({ CHAT_ADMIN_USERNAME: 'first-admin' });
    await first.api
      .post('/api/auth/register')
      .send({ username: 'boss', password: 'boss-password' })
      .expect(201);
    await first.close();
    await query(process.env.DATABASE_URL!, `DELETE FROM "ChatUser" WHERE role = 'admin'`);

    const start = startApp('chat', {
      env: {
        SECRET_KEYS: generateSecretKeySpec('test'),
        CHAT_ADMIN_USERNAME: 'boss',
        CHAT_ADMIN_PASSWORD: 'a-long-password',
      },
    });
    await expect(start).rejects.toThrow(/chat exited with 1/);
    await expect(start).rejects.toThrow(
      /CHAT_ADMIN_USERNAME \\"boss\\" belongs to an existing user who is not an administrator/,
    );
    const roles = await query(
      process.env.DATABASE_URL!,
      `SELECT role FROM "ChatUser" WHERE username = 'boss'`,
    );
    expect(roles).toEqual([{ role: 'user' }]);
  });
});

describe('auth: when Redis is unreachable', () => {
  let chat: ChatHarness;

  beforeAll(async () => {
    await resetChatData();
    // Nothing listens on the discard port.
    chat = await startChat({ REDIS_URL: 'redis://127.0.0.1:9' });
  });

  afterAll(async () => {
    const redis = chat.app.get<RedisClient>(REDIS);
    await chat.close();
    // quit() cannot reach a Redis that is away, so the client would keep reconnecting;
    // disconnect() stops that but leaves ioredis's 2 s disconnectTimeout timer running.
    redis.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 2_100));
  });

  it('answers 503 service_unavailable, not a 500, and readiness says why', async () => {
    const login = await chat.api
      .post('/api/auth/login')
      .send({ username: ADMIN.username, password: ADMIN.password })
      .expect(503);
    expect(login.body.error).toMatchObject({ code: 'service_unavailable' });
    expect(login.body.error.message).toMatch(/unavailable \(Redis\)/);
    const me = await chat.api
      .get('/api/auth/me')
      .set(bearer(`sess-${'a'.repeat(43)}`))
      .expect(503);
    expect(me.body.error.code).toBe('service_unavailable');
    const ready = await chat.api.get('/readyz').expect(503);
    expect(ready.body.checks.redis.status).toBe('unavailable');
    expect(ready.body.checks.postgres.status).toBe('ok');
    await chat.api.get('/healthz').expect(200);
  });
});
