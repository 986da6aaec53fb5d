import { randomBytes } from 'node:crypto';
import { Queues, RequestLogJobs } from '@switchyard/contracts';
import { inNamespace, openTypedQueue } from '@switchyard/messaging';
import { query, waitFor } from '@switchyard/testing';
import { Redis } from 'ioredis';
import { freshAccount, Stack, STACK_START_TIMEOUT_MS, uniqueName } from '../support/stack.js';

// The request log (docs/operations.md, "Request log"): a token or a team with it on has its
// requests' bodies kept, redacted and capped, readable by owners and administrators through
// the admin API; a token without it leaves no trace of its bodies; old entries go.

const MAX_BYTES = 2_048;

interface Detail {
  requestId: string;
  tokenId: number;
  status: number;
  requestBody: string;
  responseBody: string;
  requestTruncated: boolean;
  responseTruncated: boolean;
  usage: { promptTokens: number; cost: number } | null;
}

interface Page {
  items: { requestId: string; tokenId: number }[];
  total: number;
}

describe('request log', () => {
  const first = { username: 'owner', password: `first-${randomBytes(6).toString('hex')}` };
  const stack = new Stack({
    admin: first,
    metering: true,
    edgeEnv: {
      REQUEST_LOG_MAX_BYTES: String(MAX_BYTES),
      REQUEST_LOG_REDACT_PATTERNS: JSON.stringify(['acct-[0-9]{6}']),
    },
  });
  let owner = '';
  let viewer = '';
  let model = '';

  async function api<T>(
    session: string,
    method: string,
    route: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const response = await fetch(`${stack.edge.url}/api${route}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(session ? { authorization: `Bearer ${session}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as T };
  }

  /** A session of an administrator whose first password has been changed. */
  async function signIn(username: string, initial: string): Promise<string> {
    const login = await api<{ token: string }>('', 'POST', '/auth/login', {
      username,
      password: initial,
    });
    const password = `changed-${randomBytes(6).toString('hex')}`;
    const changed = await api(login.body.token, 'POST', '/auth/password', {
      currentPassword: initial,
      newPassword: password,
    });
    expect([200, 204]).toContain(changed.status);
    return (await api<{ token: string }>('', 'POST', '/auth/login', { username, password })).body
      .token;
  }

  async function chat(key: string, content: string, stream = false): Promise<string> {
    const response = await fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream, messages: [{ role: 'user', content }] }),
    });
    await response.arrayBuffer();
    expect(response.status).toBe(200);
    return response.headers.get('x-request-id')!;
  }

  const detail = (requestId: string) =>
    waitFor(
      async () => {
        const answer = await api<Detail>(owner, 'GET', `/request-log/${requestId}`);
        return answer.status === 200 && answer.body.usage ? answer.body : undefined;
      },
      { what: `request log entry ${requestId} with its usage` },
    );

  const usageRow = (requestId: string) =>
    waitFor(
      async () =>
        (
          await query<{ status: number }>(
            stack.databaseUrl,
            `SELECT status FROM "UsageLog" WHERE "requestId" = $1`,
            [requestId],
          )
        )[0],
      { what: `usage row ${requestId}` },
    );

  async function logged(tokenId: number): Promise<void> {
    const answer = await api(owner, 'PUT', `/request-log/tokens/${tokenId}`, { enabled: true });
    expect(answer.status).toBe(200);
  }

  beforeAll(async () => {
    await stack.start();
    owner = await signIn(first.username, first.password);
    const initial = `viewer-${randomBytes(6).toString('hex')}`;
    const created = await api(owner, 'POST', '/admins', {
      username: 'viewer',
      password: initial,
      role: 'viewer',
    });
    expect(created.status).toBe(201);
    viewer = await signIn('viewer', initial);
    model = uniqueName('logged');
    await stack.createChannel({ models: [model], keys: [await freshAccount(stack)] });
  }, STACK_START_TIMEOUT_MS);

  afterAll(() => stack.stop());

  it('keeps a logged token’s bodies, redacted of secrets and configured patterns', async () => {
    const token = await stack.createToken();
    // Turned on before the edge has ever read the token, so its first read carries the flag.
    await logged(token.id);
    const secret = `sk-${randomBytes(24).toString('hex')}`;
    const content = `my key is ${secret}, "api_key": "plain-${randomBytes(8).toString('hex')}", account acct-123456, hello`;
    const requestId = await chat(token.key, content);

    const entry = await detail(requestId);
    expect(entry).toMatchObject({ tokenId: token.id, status: 200, requestTruncated: false });
    expect(entry.requestBody).toContain('hello');
    expect(entry.requestBody).toContain(model);
    expect(entry.requestBody).not.toContain(secret.slice(3));
    expect(entry.requestBody).not.toContain('plain-');
    expect(entry.requestBody).not.toContain('acct-123456');
    expect(entry.requestBody).toContain('[redacted]');
    // The answer as the client got it, and the usage row it was billed by.
    expect(JSON.parse(entry.responseBody)).toHaveProperty('choices');
    expect(entry.usage!.promptTokens).toBeGreaterThan(0);

    const page = await api<Page>(owner, 'GET', `/request-log?tokenId=${token.id}`);
    expect(page.body.items.map((item) => item.requestId)).toEqual([requestId]);
  });

  it('keeps a stream as its events, and cuts bodies over the cap', async () => {
    const token = await stack.createToken();
    await logged(token.id);
    const streamed = await detail(await chat(token.key, 'stream me', true));
    expect(streamed.responseBody).toContain('data: ');
    expect(streamed.responseBody).toContain('[DONE]');

    const long = await detail(await chat(token.key, 'x'.repeat(MAX_BYTES * 3)));
    expect(long.requestTruncated).toBe(true);
    expect(long.requestBody.length).toBeLessThanOrEqual(MAX_BYTES);
    expect(long.requestBody.startsWith('{"model"')).toBe(true);
  });

  it('logs every token of a team that has it on', async () => {
    const [team] = await query<{ id: number }>(
      stack.databaseUrl,
      `INSERT INTO "Team" (name, "updatedAt") VALUES ($1, now()) RETURNING id`,
      [uniqueName('team')],
    );
    const token = await stack.createToken();
    await query(stack.databaseUrl, `UPDATE "Token" SET "teamId" = $1 WHERE id = $2`, [
      team!.id,
      token.id,
    ]);
    const on = await api<{ teams: { id: number }[] }>(
      owner,
      'PUT',
      `/request-log/teams/${team!.id}`,
      {
        enabled: true,
      },
    );
    expect(on.status).toBe(200);
    expect(on.body.teams.map((t) => t.id)).toContain(team!.id);
    const entry = await detail(await chat(token.key, 'from a team'));
    expect(entry.tokenId).toBe(token.id);
    const byTeam = await api<Page>(owner, 'GET', `/request-log?teamId=${team!.id}`);
    expect(byTeam.body.items.map((item) => item.tokenId)).toEqual([token.id]);
  });

  it('keeps nothing of a token without it', async () => {
    const plain = await stack.createToken();
    const witness = await stack.createToken();
    await logged(witness.id);
    const unlogged = await chat(plain.key, 'not for the log');
    // The logged request, sent after, is stored once the unlogged one would have been.
    await detail(await chat(witness.key, 'for the log'));
    await usageRow(unlogged);
    const [row] = await query(
      stack.databaseUrl,
      `SELECT 1 FROM "RequestLog" WHERE "requestId" = $1 OR "tokenId" = $2`,
      [unlogged, plain.id],
    );
    expect(row).toBeUndefined();
    expect((await api(owner, 'GET', `/request-log/${unlogged}`)).status).toBe(404);
    const settings = await api<{ tokens: { id: number }[] }>(owner, 'GET', '/request-log/settings');
    expect(settings.body.tokens.map((t) => t.id)).not.toContain(plain.id);
  });

  it('refuses viewers, the bodies and the switch alike', async () => {
    const token = await stack.createToken();
    for (const [method, route, body] of [
      ['GET', '/request-log', undefined],
      ['GET', '/request-log/settings', undefined],
      ['GET', '/request-log/any-request', undefined],
      ['PUT', `/request-log/tokens/${token.id}`, { enabled: true }],
    ] as const) {
      const answer = await api<{ error: { code: string } }>(viewer, method, route, body);
      expect([route, answer.status, answer.body.error.code]).toEqual([route, 403, 'forbidden']);
    }
    const [row] = await query<{ requestLog: boolean }>(
      stack.databaseUrl,
      `SELECT "requestLog" FROM "Token" WHERE id = $1`,
      [token.id],
    );
    expect(row!.requestLog).toBe(false);
  });

  it('deletes entries past the retention when its job runs', async () => {
    const day = 86_400_000;
    const insert = (requestId: string, requestedAt: Date) =>
      query(
        stack.databaseUrl,
        `INSERT INTO "RequestLog" ("requestId", "tokenId", endpoint, model, status,
           "requestBody", "responseBody", "requestedAt")
         VALUES ($1, 1, 'chat.completions', 'm', 200, '{}', '{}', $2)`,
        [requestId, requestedAt],
      );
    const old = uniqueName('old');
    const recent = uniqueName('recent');
    // The default retention is 7 days.
    await insert(old, new Date(Date.now() - 8 * day));
    await insert(recent, new Date(Date.now() - 6 * day));
    const connection = new Redis(stack.redisUrl, { maxRetriesPerRequest: null });
    const queue = openTypedQueue(Queues.RequestLog, {
      connection,
      prefix: inNamespace(stack.prefix, 'bull'),
    });
    try {
      await queue.add(RequestLogJobs.Retention, {});
      await waitFor(
        async () => {
          const rows = await query(
            stack.databaseUrl,
            `SELECT 1 FROM "RequestLog" WHERE "requestId" = $1`,
            [old],
          );
          return rows.length === 0 ? true : undefined;
        },
        { what: 'the old entry deleted' },
      );
    } finally {
      await queue.close();
      connection.disconnect();
    }
    const kept = await query(
      stack.databaseUrl,
      `SELECT 1 FROM "RequestLog" WHERE "requestId" = $1`,
      [recent],
    );
    expect(kept).toHaveLength(1);
  });
});
