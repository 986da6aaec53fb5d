import { randomBytes } from 'node:crypto';
import { query, startApp, waitFor, type AppProcess } from '@switchyard/testing';
import { startTestMcpServer, type TestMcpServer } from '@switchyard/testing/mcp';
import { Redis } from 'ioredis';
import { Stack, STACK_START_TIMEOUT_MS, uniqueName } from '../support/stack.js';

// Upstream keys and MCP/A2A credentials never leave the suite, even when the other side
// quotes them back (docs/architecture.md, "Secrets in error text"). A provider whose
// refusals quote the whole key, and an MCP server whose 401 quotes its Authorization
// header, are driven through every path their words take: the five front routes (a
// stream too), a refusal relayed as the upstream worded it, the router's automatic disable,
// the admin's channel test and the chat app's MCP and A2A status and tool steps. Then
// every answer, every log line of every service, every Redis key of the stack and every
// row of every table is searched for the secrets.
//
// The secrets are not key-shaped on purpose (no `sk-`, no `Bearer`): only the redaction of
// each channel's and server's configured secrets can catch them, not the shape masks.

const REDACTED = '[redacted]';
const secret = (what: string) => `${what}.${randomBytes(6).toString('hex')}.credential`;

interface Route {
  name: string;
  path: string;
  body: (model: string) => Record<string, unknown>;
  headers?: Record<string, string>;
}

const ROUTES: Route[] = [
  {
    name: 'chat',
    path: '/v1/chat/completions',
    body: (model) => ({ model, messages: [{ role: 'user', content: 'hi' }] }),
  },
  {
    name: 'stream',
    path: '/v1/chat/completions',
    body: (model) => ({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  },
  {
    name: 'messages',
    path: '/v1/messages',
    body: (model) => ({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    headers: { 'anthropic-version': '2023-06-01' },
  },
  {
    name: 'responses',
    path: '/v1/responses',
    body: (model) => ({ model, input: 'hi' }),
  },
  {
    name: 'embeddings',
    path: '/v1/embeddings',
    body: (model) => ({ model, input: 'hi' }),
  },
];

describe('secrets in error text', () => {
  const first = { username: 'owner', password: `first-${randomBytes(6).toString('hex')}` };
  const stack = new Stack({ admin: first, metering: true, mockAccounts: 'sk-redact-healthy' });
  const password = `changed-${randomBytes(6).toString('hex')}`;
  const chatAdmin = { username: 'chatowner', password: `pw-${randomBytes(6).toString('hex')}` };
  /** One refusing channel per route, so each route meets the upstream's refusal itself. */
  const channels = ROUTES.map((route) => ({
    route,
    model: uniqueName(`redact-${route.name}`),
    key: secret(`upstream-${route.name}`),
    id: 0,
    keyId: 0,
  }));
  const relayedKey = secret('upstream-relayed');
  const relayedModel = uniqueName('redact-relayed');
  const mcpSecret = secret('mcp');
  const a2aSecret = secret('a2a');
  const secrets = [...channels.map((c) => c.key), relayedKey, mcpSecret, a2aSecret];
  /** Everything a client, an administrator or a chat user was sent. */
  const answers: string[] = [];
  let token = '';
  let session = '';
  let chat: AppProcess;
  let echoing: TestMcpServer;

  async function admin(method: string, route: string, body?: unknown) {
    const response = await fetch(`${stack.edge.url}/api${route}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(session ? { authorization: `Bearer ${session}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    answers.push(text);
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as unknown };
  }

  async function chatApi(method: string, route: string, bearer: string | null, body?: unknown) {
    const response = await fetch(`${chat.url}${route}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    answers.push(text);
    if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text}`);
    return text;
  }

  beforeAll(async () => {
    await stack.start();
    echoing = await startTestMcpServer({ echoCredentials: true });
    for (const channel of channels) {
      await stack.mockAccount(channel.key, { banned: true, echoKey: true });
      const created = await stack.createChannel({ models: [channel.model], keys: [channel.key] });
      channel.id = created.id;
      channel.keyId = created.keyIds[0]!;
    }
    await stack.mockAccount(relayedKey);
    await stack.mockFault({
      key: relayedKey,
      status: 400,
      contentType: 'application/json',
      body: JSON.stringify({
        error: {
          message: `The key ${relayedKey} may not use this model.`,
          type: 'invalid_request_error',
          code: 'model_not_allowed',
        },
      }),
    });
    await stack.createChannel({ models: [relayedModel], keys: [relayedKey] });
    await stack.createChannel({ models: ['redact-tools'], keys: ['sk-redact-healthy'] });
    token = (await stack.createToken()).key;
    chat = await startApp('chat', {
      env: {
        ...stack.env,
        CHAT_ADMIN_USERNAME: chatAdmin.username,
        CHAT_ADMIN_PASSWORD: chatAdmin.password,
      },
      readyPath: '/readyz',
    });
  }, STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await chat?.stop();
    await echoing?.close();
    await stack.stop();
  });

  it.each(ROUTES.map((route, index) => [route.name, index] as const))(
    '%s: the upstream quotes the key, the client gets the refusal without it',
    async (_name, index) => {
      const { route, model, key } = channels[index]!;
      const response = await fetch(`${stack.edge.url}${route.path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          ...route.headers,
        },
        body: JSON.stringify(route.body(model)),
      });
      const text = await response.text();
      answers.push(text);
      expect(response.status).toBe(503);
      // The refusal reached the client in the upstream's words, the key taken out.
      expect(text).toContain('upstream answered 401: Incorrect API key provided: [redacted]');
      expect(text).not.toContain(key);
    },
  );

  it('relays a refusal in the upstream’s own words without the key it quotes', async () => {
    const response = await fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: relayedModel, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await response.text();
    answers.push(text);
    expect(response.status).toBe(400);
    expect(JSON.parse(text)).toMatchObject({
      error: { code: 'model_not_allowed', message: `The key ${REDACTED} may not use this model.` },
    });
  });

  it("stores the router's automatic disable and its audit without the key", async () => {
    const keyIds = channels.map((c) => c.keyId);
    const rows = await waitFor(
      async () => {
        const found = await query<{ id: number; status: string; statusReason: string | null }>(
          stack.databaseUrl,
          `SELECT id, status, "statusReason" FROM "ChannelKey" WHERE id = ANY($1)`,
          [keyIds],
        );
        return found.every((row) => row.status === 'auto_disabled') ? found : undefined;
      },
      { what: 'every refused key disabled by the router' },
    );
    for (const row of rows) {
      expect(row.statusReason).toContain(
        `banned by the upstream: Incorrect API key provided: ${REDACTED}`,
      );
    }
    const audit = await query<{ details: { reason: string } }>(
      stack.databaseUrl,
      `SELECT details FROM "AuditLog" WHERE action = 'channel.key_auto_disable' AND "targetId" = ANY($1)`,
      [keyIds.map(String)],
    );
    expect(audit).toHaveLength(keyIds.length);
    for (const row of audit) expect(row.details.reason).toContain(REDACTED);
  });

  it("answers the admin's channel test without the key the upstream quoted", async () => {
    const login = await admin('POST', '/auth/login', first);
    session = (login.body as { token: string }).token;
    await admin('POST', '/auth/password', {
      currentPassword: first.password,
      newPassword: password,
    });
    session = (
      (await admin('POST', '/auth/login', { username: first.username, password })).body as {
        token: string;
      }
    ).token;
    const tested = await admin('POST', `/channels/${channels[0]!.id}/test`, {
      model: channels[0]!.model,
    });
    expect(tested.body).toMatchObject({
      ok: false,
      status: 401,
      error: { message: expect.stringContaining(REDACTED) as unknown },
    });
  });

  it("shows the chat app's MCP server and A2A agent status, and a reply's tool step, without their credentials", async () => {
    const login = JSON.parse(await chatApi('POST', '/api/auth/login', null, chatAdmin)) as {
      token: string;
    };
    const bearer = login.token;
    await chatApi('POST', '/api/admin/api-keys', bearer, {
      address: stack.edge.url,
      key: token,
      purpose: 'chat',
    });
    await chatApi('POST', '/api/admin/models', bearer, {
      name: 'redact-tools',
      toolMode: 'native',
      open: true,
    });
    const server = JSON.parse(
      await chatApi('POST', '/api/admin/mcp-servers', bearer, {
        name: 'echoing',
        url: echoing.url,
        headers: { Authorization: `Token ${mcpSecret}` },
      }),
    ) as { id: number; status: { reachable: boolean; lastError: string | null } };
    // The server was sent the header, and quoted it back.
    expect(echoing.requestHeaders.some((h) => h.authorization === `Token ${mcpSecret}`)).toBe(true);
    expect(server.status.reachable).toBe(false);
    expect(server.status.lastError).toContain(REDACTED);
    const listed = await chatApi('GET', `/api/admin/mcp-servers/${server.id}`, bearer);
    expect(listed).toContain('"reachable":false');

    const agent = JSON.parse(
      await chatApi('POST', '/api/admin/a2a-agents', bearer, {
        name: 'echoing-agent',
        cardUrl: echoing.url.replace('/mcp', '/.well-known/agent-card.json'),
        headers: { Authorization: `Token ${a2aSecret}` },
      }),
    ) as { status: { reachable: boolean; lastError: string | null } };
    expect(agent.status.reachable).toBe(false);

    // A reply with the server enabled: its connect step is streamed and stored.
    const conversation = JSON.parse(
      await chatApi('POST', '/api/conversations', bearer, {
        model: 'redact-tools',
        mcpServerIds: [server.id],
      }),
    ) as { id: string };
    const streamed = await chatApi(
      'POST',
      `/api/conversations/${conversation.id}/messages`,
      bearer,
      { content: 'Weather? get_forecast {"address": "1 Main St"}' },
    );
    expect(streamed).toContain('server_unreachable');
    await chatApi('GET', `/api/conversations/${conversation.id}/messages`, bearer);
  });

  it('leaves no secret in any answer, log line, Redis key or table', async () => {
    // Every place is searched before anything is asserted: a leak names all its places.
    const leaks: Record<string, string[]> = {};
    const search = (place: string, text: string) => {
      const found = secrets.filter((s) => text.includes(s));
      if (found.length > 0) leaks[place] = found;
    };
    search('answers', answers.join('\n'));

    // Let buffered log lines out (they are flushed at least every 200 ms).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const services = [...stack.edges, ...stack.routers, ...stack.meterings, stack.admin!, chat];
    for (const service of services) search(`log of ${service.name}`, service.output());

    const redis = new Redis(stack.redisUrl);
    let redisKeys = 0;
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${stack.prefix}*`, 'COUNT', 500);
        cursor = next;
        for (const key of keys) {
          redisKeys += 1;
          search(`redis ${key}`, `${key}\n${await redisValue(redis, key)}`);
        }
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }

    const tables = await query<{ table_name: string }>(
      stack.databaseUrl,
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
    );
    for (const { table_name: table } of tables) {
      const rows = await query<{ row: string }>(
        stack.databaseUrl,
        `SELECT t::text AS row FROM "${table}" t`,
      );
      search(`table ${table}`, rows.map((r) => r.row).join('\n'));
    }

    // The search covered what it should: the routing snapshot and queues, and the tables
    // the router, metering and the chat app write.
    expect(redisKeys).toBeGreaterThan(0);
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining(['ChannelKey', 'AuditLog', 'UsageLog', 'McpServer', 'Message']),
    );
    expect(leaks).toEqual({});
  });
});

async function redisValue(redis: Redis, key: string): Promise<string> {
  switch (await redis.type(key)) {
    case 'string':
      return (await redis.getBuffer(key))?.toString('latin1') ?? '';
    case 'hash':
      return JSON.stringify(await redis.hgetall(key));
    case 'list':
      return JSON.stringify(await redis.lrange(key, 0, -1));
    case 'set':
      return JSON.stringify(await redis.smembers(key));
    case 'zset':
      return JSON.stringify(await redis.zrange(key, '0', '-1'));
    case 'stream':
      return JSON.stringify(await redis.xrange(key, '-', '+'));
    default:
      return '';
  }
}
