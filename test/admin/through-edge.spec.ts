import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { API_BODY_LIMITS, bodyTooLargeMessage } from '@switchyard/contracts';
import { waitFor, query } from '@switchyard/testing';
import { freshAccount, Stack, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// The admin API as the dashboard and scripts reach it: through the edge at /api
// (docs/specification.md, "Endpoints"), with its changes reaching the gateway's routing and
// auth within a second.

interface ApiAnswer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

describe('admin API through the edge', () => {
  const first = { username: 'owner', password: `first-${randomBytes(6).toString('hex')}` };
  const stack = new Stack({ admin: first });
  const password = `changed-${randomBytes(6).toString('hex')}`;
  let session = '';

  async function api<T = Record<string, unknown>>(
    method: string,
    route: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiAnswer<T>> {
    const response = await fetch(`${stack.edge.url}/api${route}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(session ? { authorization: `Bearer ${session}` } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as T };
  }

  beforeAll(async () => {
    await stack.start();
  }, STACK_START_TIMEOUT_MS);

  afterAll(() => stack.stop());

  it('makes the first administrator change the password before anything else works', async () => {
    const login = await api<{ token: string; mustChangePassword: boolean }>(
      'POST',
      '/auth/login',
      first,
    );
    expect(login.status).toBe(200);
    expect(login.body.mustChangePassword).toBe(true);
    session = login.body.token;
    const blocked = await api<{ error: { code: string } }>('GET', '/channels');
    expect(blocked.status).toBe(403);
    expect(blocked.body.error.code).toBe('password_change_required');
    const changed = await api('POST', '/auth/password', {
      currentPassword: first.password,
      newPassword: password,
    });
    expect([200, 204]).toContain(changed.status);
    session = (
      await api<{ token: string }>('POST', '/auth/login', { username: first.username, password })
    ).body.token;
    expect((await api('GET', '/channels')).status).toBe(200);
  });

  it('throttles repeated failed logins per client, as the edge forwards its address', async () => {
    const attacker = { 'x-forwarded-for': '203.0.113.50' };
    const attempts: number[] = [];
    for (let i = 0; i < 25; i += 1) {
      attempts.push(
        (
          await api(
            'POST',
            '/auth/login',
            { username: `nobody${i}`, password: 'wrong password' },
            attacker,
          )
        ).status,
      );
    }
    expect(attempts).toContain(401);
    expect(attempts.at(-1)).toBe(429);
    // Another client is not affected.
    const other = await api(
      'POST',
      '/auth/login',
      { username: first.username, password },
      { 'x-forwarded-for': '198.51.100.9' },
    );
    expect(other.status).toBe(200);
  });

  it('creates a channel and a token that work on /v1 within a second, and a disabled token stops within a second', async () => {
    const model = uniqueName('m');
    const upstreamKey = await freshAccount(stack);
    const channel = await api<{ id: number; status: string; keys: { lastFour: string }[] }>(
      'POST',
      '/channels',
      {
        name: uniqueName('channel'),
        kind: 'single',
        baseUrl: stack.mock.url,
        keys: [upstreamKey],
        models: [model],
        priority: 0,
        weight: 1,
      },
    );
    expect(channel.status).toBe(201);
    expect(channel.body.keys[0]!.lastFour).toBe(upstreamKey.slice(-4));
    expect(JSON.stringify(channel.body)).not.toContain(upstreamKey);

    const created = await api<{ id: number; key: string; version: number }>('POST', '/tokens', {
      name: uniqueName('token'),
      expiresAt: null,
      quota: null,
    });
    expect(created.status).toBe(201);
    const ask = () =>
      stack
        .client(created.body.key)
        .chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
    await waitFor(async () => ((await ask()).object === 'chat.completion' ? true : undefined), {
      timeoutMs: 1_000,
      what: 'token and channel usable',
    });

    const disabled = await api('PATCH', `/tokens/${created.body.id}`, {
      enabled: false,
      version: created.body.version,
    });
    expect(disabled.status).toBe(200);
    await waitFor(
      async () =>
        ((await ask().catch((e: { code?: string }) => e)) as { code?: string }).code ===
          'token_disabled' || undefined,
      { timeoutMs: 1_000, what: 'disabled token refused' },
    );
  });

  it('takes a channel out of routing within a second of being disabled, and tests channels against the upstream', async () => {
    const model = uniqueName('m');
    const healthy = await freshAccount(stack);
    const banned = await freshAccount(stack, { banned: true });
    const channel = await api<{ id: number }>('POST', '/channels', {
      name: uniqueName('channel'),
      kind: 'aggregated',
      baseUrl: stack.mock.url,
      keys: [healthy],
      models: [model],
      priority: 0,
      weight: 1,
    });
    const token = await stack.createToken();
    await stack.routable(token.key, model);

    const tested = await api<{ ok: boolean; status: number }>(
      'POST',
      `/channels/${channel.body.id}/test`,
      { model },
    );
    expect(tested.body).toMatchObject({ ok: true, status: 200 });
    const refusing = await api<{ id: number }>('POST', '/channels', {
      name: uniqueName('channel'),
      kind: 'single',
      baseUrl: stack.mock.url,
      keys: [banned],
      models: [uniqueName('m')],
      priority: 0,
      weight: 1,
    });
    const failed = await api<{ ok: boolean; status: number; error: { message: string } }>(
      'POST',
      `/channels/${refusing.body.id}/test`,
      {},
    );
    expect(failed.body).toMatchObject({ ok: false, status: 401 });
    expect(JSON.stringify(failed.body)).not.toContain(banned);

    expect((await api('POST', `/channels/${channel.body.id}/disable`)).status).toBeLessThan(300);
    await waitFor(
      async () =>
        (
          (await stack
            .client(token.key)
            .chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] })
            .catch((e: { status?: number }) => e)) as { status?: number }
        ).status === 404 || undefined,
      { timeoutMs: 1_000, what: 'disabled channel out of routing' },
    );
  });

  it('never shows an upstream key in a response or a log line of the admin service or the edge', async () => {
    const secret = `upstream-secret-${randomBytes(8).toString('hex')}`;
    await stack.mockAccount(secret);
    const created = await api<{ id: number }>('POST', '/channels', {
      name: uniqueName('channel'),
      kind: 'single',
      baseUrl: stack.mock.url,
      keys: [secret],
      models: [uniqueName('m')],
      priority: 0,
      weight: 1,
    });
    const answers = [
      created,
      await api('GET', `/channels/${created.body.id}`),
      await api('GET', '/channels'),
      await api('POST', `/channels/${created.body.id}/test`, {}),
      await api('GET', '/audit'),
    ];
    for (const answer of answers) expect(JSON.stringify(answer.body)).not.toContain(secret);
    for (const app of [stack.admin!, stack.edge, ...stack.routers])
      expect(app.output()).not.toContain(secret);
  });

  it("writes audit rows with the administrator and the client's address", async () => {
    await api(
      'POST',
      '/tokens',
      { name: uniqueName('audited'), expiresAt: null, quota: 5_000 },
      { 'x-forwarded-for': '192.0.2.77' },
    );
    const rows = await query<{ actorName: string; action: string; clientIp: string }>(
      stack.databaseUrl,
      `SELECT "actorName", action, "clientIp" FROM "AuditLog" WHERE "clientIp" = '192.0.2.77'`,
    );
    expect(rows).toEqual([
      expect.objectContaining({ actorName: first.username, clientIp: '192.0.2.77' }),
    ]);
    expect(rows[0]!.action).toMatch(/token/);
  });

  it('refuses a body past the admin API limit itself, with 413 in the API error shape', async () => {
    // The edge answers from the declared length alone: only the headers are sent (a body
    // being written when the edge closes the connection would fail with EPIPE instead).
    const size = API_BODY_LIMITS.admin + 1;
    const client = httpRequest({
      host: '127.0.0.1',
      port: new URL(stack.edge.url).port,
      method: 'PUT',
      path: '/api/prices',
      headers: {
        'content-type': 'application/json',
        'content-length': size,
        authorization: `Bearer ${session}`,
      },
    });
    client.on('error', () => undefined); // the connection closes once answered
    client.flushHeaders();
    const [response] = (await once(client, 'response')) as [IncomingMessage];
    expect(response.statusCode).toBe(413);
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk as Buffer);
    client.destroy();
    expect(JSON.parse(Buffer.concat(chunks).toString('utf8'))).toEqual({
      error: { code: 'payload_too_large', message: bodyTooLargeMessage() },
    });
    // A body within the limit still reaches the admin service, which judges it.
    const within = await api('PUT', '/prices', { items: 'not a list' });
    expect(within.status).toBe(400);
  });

  it('passes requests with Expect: 100-continue through', async () => {
    const { port } = new URL(stack.edge.url);
    const body = JSON.stringify({ username: 'nobody', password: 'wrong password' });
    const client = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/auth/login',
      headers: {
        expect: '100-continue',
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'x-forwarded-for': '203.0.113.77',
      },
    });
    client.once('continue', () => client.end(body));
    const [response] = (await once(client, 'response')) as [IncomingMessage];
    response.resume();
    expect(response.statusCode).toBe(401);
  });

  it('answers 502 in the API error shape when the admin service is down', async () => {
    await stack.admin!.stop();
    const down = await api<{ error: { code: string } }>('GET', '/channels');
    expect(down.status).toBe(502);
    expect(down.body.error.code).toBe('bad_gateway');
  });
});
