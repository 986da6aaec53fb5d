import { SecretCipher } from '@switchyard/security';
import { query } from '@switchyard/testing';
import { startTestMcpServer, type TestMcpServer } from '@switchyard/testing/mcp';
import {
  ADMIN,
  bearer,
  login,
  newUser,
  resetChatData,
  SECRET_KEYS,
  startChat,
  type ChatHarness,
} from '../testing/chat-harness.fixture.js';

// The MCP server registry against a real MCP server (the SDK's server side) and one that
// does not exist: what administrators store, what they see, and who may do it.

interface ServerResponse {
  id: number;
  name: string;
  url: string;
  headerNames: string[];
  enabled: boolean;
  status: { reachable: boolean; lastError: string | null; checkedAt: string };
  tools: { name: string; description: string | null; inputSchema: Record<string, unknown> }[];
  resources: { uri: string; name: string }[];
}

/** Nothing listens on the discard port: connections are refused at once. */
const CLOSED = 'http://127.0.0.1:9/mcp';

describe('admin: MCP servers', () => {
  let chat: ChatHarness;
  let mcp: TestMcpServer;
  let admin: Record<string, string>;

  beforeAll(async () => {
    await resetChatData();
    mcp = await startTestMcpServer();
    chat = await startChat();
    admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
  });

  afterAll(async () => {
    await chat?.close();
    await mcp?.close();
  });

  it('registers a server, seals its headers, and lists its tools and resources', async () => {
    const secret = 'Bearer mcp-secret-1234567890';
    const created = await chat.api
      .post('/api/admin/mcp-servers')
      .set(admin)
      .send({ name: 'weather', url: mcp.url, headers: { authorization: secret } })
      .expect(201);
    const server = created.body as ServerResponse;
    expect(server).toMatchObject({
      name: 'weather',
      url: mcp.url,
      headerNames: ['authorization'],
      enabled: true,
      status: { reachable: true, lastError: null },
    });
    expect(server.tools.map((tool) => tool.name)).toEqual(['get_forecast', 'slow_forecast']);
    const forecast = server.tools[0]!;
    expect(forecast.inputSchema).toMatchObject({
      properties: { address: { type: 'string', maxLength: 84 } },
      required: ['address'],
    });
    expect(server.resources).toEqual([
      expect.objectContaining({ uri: 'weather://cities', name: 'Cities' }),
    ]);
    expect(JSON.stringify(created.body)).not.toContain('mcp-secret');
    // Listing asked the server, with the stored header, and called nothing.
    expect(mcp.requestHeaders.length).toBeGreaterThan(0);
    expect(mcp.requestHeaders.every((headers) => headers.authorization === secret)).toBe(true);
    expect(mcp.calls).toEqual([]);

    const [row] = await query<{ headersCiphertext: string }>(
      process.env.DATABASE_URL!,
      'SELECT "headersCiphertext" FROM "McpServer" WHERE id = $1',
      [server.id],
    );
    expect(row!.headersCiphertext).not.toContain('mcp-secret');
    expect(JSON.parse(new SecretCipher([SECRET_KEYS]).open(row!.headersCiphertext))).toEqual({
      authorization: secret,
    });
  });

  it('reports a server it cannot reach, with the reason', async () => {
    const created = await chat.api
      .post('/api/admin/mcp-servers')
      .set(admin)
      .send({ name: 'nowhere', url: CLOSED, enabled: false })
      .expect(201);
    expect(created.body).toMatchObject({
      enabled: false,
      status: { reachable: false, lastError: expect.stringMatching(/ECONNREFUSED|fetch failed/) },
      tools: [],
      resources: [],
    });
    const listed = (await chat.api.get('/api/admin/mcp-servers').set(admin).expect(200)).body
      .items as ServerResponse[];
    expect(listed.map((s) => [s.name, s.status.reachable])).toEqual([
      ['weather', true],
      ['nowhere', false],
    ]);
  });

  it('reports a server that quotes its credential back, without the header value', async () => {
    const echoing = await startTestMcpServer({ echoCredentials: true });
    try {
      // Not key-shaped: only the server's own configured value can be recognised.
      const value = 'Token echoed.5e1f7a.credential';
      const created = await chat.api
        .post('/api/admin/mcp-servers')
        .set(admin)
        .send({ name: 'echoing', url: echoing.url, headers: { Authorization: value } })
        .expect(201);
      expect(echoing.requestHeaders.map((headers) => headers.authorization)).toContain(value);
      const server = created.body as ServerResponse;
      expect(server.status).toMatchObject({
        reachable: false,
        lastError: expect.stringContaining('Invalid credentials: [redacted]') as unknown,
      });
      const fetched = await chat.api.get(`/api/admin/mcp-servers/${server.id}`).set(admin);
      expect(JSON.stringify([created.body, fetched.body])).not.toContain('echoed.5e1f7a');
      await chat.api.delete(`/api/admin/mcp-servers/${server.id}`).set(admin).expect(204);
    } finally {
      await echoing.close();
    }
  });

  it('changes, refuses duplicates and bad input, and deletes', async () => {
    const listed = (await chat.api.get('/api/admin/mcp-servers').set(admin).expect(200)).body
      .items as ServerResponse[];
    const nowhere = listed.find((s) => s.name === 'nowhere')!;
    const renamed = await chat.api
      .patch(`/api/admin/mcp-servers/${nowhere.id}`)
      .set(admin)
      .send({ name: 'weather2', url: mcp.url, headers: {} })
      .expect(200);
    expect(renamed.body).toMatchObject({
      name: 'weather2',
      headerNames: [],
      status: { reachable: true },
    });

    const duplicate = await chat.api
      .post('/api/admin/mcp-servers')
      .set(admin)
      .send({ name: 'weather', url: mcp.url })
      .expect(409);
    expect(duplicate.body.error.code).toBe('conflict');
    for (const body of [
      { name: 'has space', url: mcp.url },
      { name: 'ok', url: 'ftp://example.com/mcp' },
      { name: 'ok', url: mcp.url, headers: { 'bad header': 'x' } },
      { name: 'ok', url: mcp.url, headers: { authorization: 'a\r\nb' } },
      { name: 'ok', url: mcp.url, headers: { authorization: 42 } },
    ]) {
      const refused = await chat.api.post('/api/admin/mcp-servers').set(admin).send(body);
      expect([refused.status, refused.body.error.code]).toEqual([400, 'validation_failed']);
    }
    await chat.api.delete(`/api/admin/mcp-servers/${nowhere.id}`).set(admin).expect(204);
    await chat.api.delete(`/api/admin/mcp-servers/${nowhere.id}`).set(admin).expect(404);
    await chat.api.get('/api/admin/mcp-servers/abc').set(admin).expect(404);
  });

  it('is for administrators; users see enabled servers by name and pick them per conversation', async () => {
    const user = await newUser(chat.api, 'picker');
    const asUser = bearer(user.token);
    const refused = await chat.api.get('/api/admin/mcp-servers').set(asUser).expect(403);
    expect(refused.body.error.code).toBe('forbidden');
    await chat.api.get('/api/admin/mcp-servers').expect(401);

    const available = (await chat.api.get('/api/mcp-servers').set(asUser).expect(200)).body
      .items as { id: number; name: string }[];
    expect(available.map((s) => s.name)).toEqual(['weather']);

    await chat.api.post('/api/admin/models').set(admin).send({ name: 'gpt-4o', open: true });
    const conversation = await chat.api
      .post('/api/conversations')
      .set(asUser)
      .send({ model: 'gpt-4o', mcpServerIds: [available[0]!.id] })
      .expect(201);
    expect(conversation.body.mcpServerIds).toEqual([available[0]!.id]);
    const unknown = await chat.api
      .patch(`/api/conversations/${conversation.body.id as string}`)
      .set(asUser)
      .send({ mcpServerIds: [999] })
      .expect(400);
    expect(unknown.body.error.fields).toEqual([
      { field: 'mcpServerIds', message: 'No enabled MCP server with id 999' },
    ]);
    const cleared = await chat.api
      .patch(`/api/conversations/${conversation.body.id as string}`)
      .set(asUser)
      .send({ mcpServerIds: [] })
      .expect(200);
    expect(cleared.body.mcpServerIds).toEqual([]);
  });
});
