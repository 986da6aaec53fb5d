import { once } from 'node:events';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { Task, TaskState, type SendMessageRequest, type StreamResponse } from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { sha256Hex } from '@switchyard/security';
import { query } from '@switchyard/testing';
import { forecastFor, startTestMcpServer, type TestMcpServer } from '@switchyard/testing/mcp';
import {
  ADMIN,
  bearer,
  login,
  newUser,
  resetChatData,
  sendMessage,
  startChat,
  startMockUpstream,
  type ChatHarness,
  type MockUpstream,
  scrapedValue,
} from '../testing/chat-harness.fixture.js';
import { A2A_UNAUTHENTICATED } from './a2a.controller.js';

// The chat app as an A2A agent, driven by the SDK's own client: per-user keys (hashed,
// revocable), the card, a task's lifecycle over both JSON-RPC versions, and cancel. The
// decision model is the mock provider's tool-using model, with a real MCP server.

const KEY = 'sk-mock-a2a';
const MODEL = 'a2a-model';
const ADDRESS = '1600 Pennsylvania Avenue, Washington DC';

function textMessage(text: string): SendMessageRequest {
  return {
    tenant: '',
    message: {
      messageId: crypto.randomUUID(),
      contextId: '',
      taskId: '',
      role: 1,
      parts: [
        {
          content: { $case: 'text', value: text },
          metadata: undefined,
          filename: '',
          mediaType: 'text/plain',
        },
      ],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
  };
}

/** A port nothing listens on: connections to it are refused at once. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function artifactText(task: Task): string {
  return task.artifacts
    .flatMap((artifact) => artifact.parts)
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .join('');
}

async function clientFor(chat: ChatHarness, key: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${key}`);
    return fetch(input, { ...init, headers });
  };
  return new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  }).createFromUrl(`${chat.url}/api/a2a/agent-card.json`, '');
}

interface TaskRow {
  userId: number;
  state: string;
  transitions: { state: string; at: string }[];
}

describe('the chat app as an A2A agent', () => {
  let chat: ChatHarness;
  let mock: MockUpstream;
  let mcp: TestMcpServer;
  let user: { id: number; token: string };
  let key: string;
  let client: Client;

  const taskRow = async (id: string): Promise<TaskRow> => {
    const rows = await query<TaskRow>(
      process.env.DATABASE_URL!,
      'SELECT "userId", state::text AS state, transitions FROM "A2aTask" WHERE id = $1',
      [id],
    );
    return rows[0]!;
  };

  beforeAll(async () => {
    await resetChatData();
    mcp = await startTestMcpServer();
    mock = await startMockUpstream([KEY]);
    chat = await startChat({ CHAT_A2A_MODEL: MODEL, CHAT_TOOL_TIMEOUT_MS: '10000' });
    const admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
    await chat.api
      .post('/api/admin/api-keys')
      .set(admin)
      .send({ address: mock.url, key: KEY })
      .expect(201);
    await chat.api
      .post('/api/admin/models')
      .set(admin)
      .send({ name: MODEL, toolMode: 'native', open: true })
      .expect(201);
    await chat.api
      .post('/api/admin/mcp-servers')
      .set(admin)
      .send({ name: 'weather', url: mcp.url })
      .expect(201);
    user = await newUser(chat.api, 'a2a');
    const created = await chat.api
      .post('/api/me/a2a-keys')
      .set(bearer(user.token))
      .send({ name: 'tests' })
      .expect(201);
    key = created.body.key as string;
    client = await clientFor(chat, key);
  }, 120_000);

  afterAll(async () => {
    await chat?.close();
    await mock?.stop();
    await mcp?.close();
  });

  describe('keys', () => {
    it('shows a key once, stores only its hash, lists it without the key', async () => {
      expect(key).toMatch(/^a2a-[A-Za-z0-9]{43}$/);
      const listed = await chat.api.get('/api/me/a2a-keys').set(bearer(user.token)).expect(200);
      expect(listed.body.items).toEqual([
        expect.objectContaining({ name: 'tests', lastFour: key.slice(-4), revokedAt: null }),
      ]);
      expect(JSON.stringify(listed.body)).not.toContain(key);
      const stored = await query<Record<string, unknown>>(
        process.env.DATABASE_URL!,
        'SELECT * FROM "A2aKey" WHERE "userId" = $1',
        [user.id],
      );
      expect(stored).toHaveLength(1);
      expect(stored[0]!.keyHash).toBe(sha256Hex(key));
      expect(JSON.stringify(stored)).not.toContain(key);
    });

    it('refuses a request without a key, or with an unknown one, as a JSON-RPC error', async () => {
      for (const authorization of [undefined, 'Bearer a2a-nothing']) {
        const response = await fetch(`${chat.url}/api/a2a`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(authorization ? { authorization } : {}),
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/get', params: { id: 'x' } }),
        });
        expect(response.status).toBe(401);
        expect(await response.json()).toEqual({
          jsonrpc: '2.0',
          id: 7,
          error: {
            code: A2A_UNAUTHENTICATED,
            message: expect.any(String),
            data: { reason: authorization ? 'invalid_key' : 'missing_key' },
          },
        });
      }
    });

    it('refuses a revoked key with a clear error; only its owner can revoke it', async () => {
      const other = await newUser(chat.api, 'other');
      const made = await chat.api
        .post('/api/me/a2a-keys')
        .set(bearer(user.token))
        .send({ name: 'to revoke' })
        .expect(201);
      const id = made.body.id as number;
      await chat.api.post(`/api/me/a2a-keys/${id}/revoke`).set(bearer(other.token)).expect(404);
      const revoked = await chat.api
        .post(`/api/me/a2a-keys/${id}/revoke`)
        .set(bearer(user.token))
        .expect(200);
      expect(revoked.body.revokedAt).toEqual(expect.any(String));

      const revokedClient = clientFor(chat, made.body.key as string);
      await expect((await revokedClient).sendMessage(textMessage('hello'))).rejects.toThrow(
        /revoked/,
      );
      const response = await fetch(`${chat.url}/api/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(made.body.key as string) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'r', method: 'message/send', params: {} }),
      });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({
        id: 'r',
        error: {
          code: A2A_UNAUTHENTICATED,
          message: expect.stringMatching(/^This A2A key was revoked on /),
          data: { reason: 'key_revoked' },
        },
      });
    });
  });

  it('publishes a card: JSON-RPC at /api/a2a in both versions, the A2A key as bearer, the MCP tools as skills', async () => {
    const response = await fetch(`${chat.url}/api/a2a/agent-card.json`, {
      headers: { 'x-forwarded-host': 'chat.example.com', 'x-forwarded-proto': 'https' },
    });
    expect(response.status).toBe(200);
    const card = (await response.json()) as Record<string, unknown>;
    expect(card).toMatchObject({
      name: 'Switchyard chat',
      description: expect.stringContaining(MODEL),
      supportedInterfaces: [
        {
          url: 'https://chat.example.com/api/a2a',
          protocolBinding: 'JSONRPC',
          protocolVersion: '1.0',
        },
        {
          url: 'https://chat.example.com/api/a2a',
          protocolBinding: 'JSONRPC',
          protocolVersion: '0.3',
        },
      ],
      capabilities: { streaming: true },
      securitySchemes: { a2aKey: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
    });
    expect((card.skills as { id: string }[]).map((skill) => skill.id)).toEqual([
      'weather/get_forecast',
      'weather/slow_forecast',
    ]);
  });

  // The card's URL came from whatever X-Forwarded-Host/-Proto a client sent
  // (`javascript://evil.example/api/a2a`).
  it.each([
    [{ 'x-forwarded-proto': 'javascript' }, 'x-forwarded-proto'],
    [{ 'x-forwarded-host': 'evil.example/api/a2a' }, 'x-forwarded-host'],
    [{ 'x-forwarded-host': 'user@evil.example' }, 'x-forwarded-host'],
  ])('refuses to build the card from forwarded %j', async (headers, field) => {
    const response = await fetch(`${chat.url}/api/a2a/agent-card.json`, { headers });
    expect(response.status).toBe(400);
    const body = (await response.json()) as {
      error: { code: string; fields: { field: string }[] };
    };
    expect(body.error.code).toBe('validation_failed');
    expect(body.error.fields.map((f) => f.field)).toEqual([field]);
  });

  it('believes X-Forwarded-Host/-Proto only from a trusted proxy', async () => {
    const untrusting = await startChat({
      CHAT_A2A_MODEL: MODEL,
      TRUSTED_PROXIES: '192.0.2.1/32',
    });
    try {
      const response = await fetch(`${untrusting.url}/api/a2a/agent-card.json`, {
        headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
      });
      expect(response.status).toBe(200);
      const card = JSON.stringify(await response.json());
      expect(card).not.toContain('evil.example');
      expect(card).toContain(`${untrusting.url}/api/a2a`);
    } finally {
      await untrusting.close();
    }
  });

  it('runs a task through the tool loop to completed, stores it with its states, and gets it back', async () => {
    const tasks = () =>
      Promise.all(
        ['submitted', 'working', 'completed'].map((state) =>
          scrapedValue(chat, 'chat_a2a_tasks_total', { state }),
        ),
      );
    const before = await tasks();
    const result = await client.sendMessage(
      textMessage(`Weather? get_forecast {"address": "${ADDRESS}"}`),
    );
    const task = result as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(task)).toBe(`The tool answered: ${forecastFor(ADDRESS)}`);
    expect(task.artifacts[0]!.metadata!.toolSteps).toEqual([
      expect.objectContaining({ server: 'weather', tool: 'get_forecast', ok: true }),
    ]);
    expect(mcp.calls.map((c) => c.name)).toContain('get_forecast');

    const fetched = await client.getTask({ tenant: '', id: task.id });
    expect(fetched.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(artifactText(fetched)).toBe(artifactText(task));

    const row = await taskRow(task.id);
    expect(row.userId).toBe(user.id);
    expect(row.state).toBe('completed');
    expect(row.transitions.map((t) => t.state)).toEqual(['submitted', 'working', 'completed']);
    // Each state it reached is counted once in the metrics.
    expect(await tasks()).toEqual(before.map((value) => value + 1));

    // Another user's key does not see it.
    const stranger = await newUser(chat.api, 'stranger');
    const strangerKey = (
      await chat.api
        .post('/api/me/a2a-keys')
        .set(bearer(stranger.token))
        .send({ name: 's' })
        .expect(201)
    ).body.key as string;
    await expect(
      (await clientFor(chat, strangerKey)).getTask({ tenant: '', id: task.id }),
    ).rejects.toThrow(/not found/i);
  });

  it('streams the states and the tool steps, and speaks v0.3 (message/send, tasks/get) too', async () => {
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(
      textMessage(`get_forecast {"address": "${ADDRESS}"}`),
    )) {
      events.push(event);
    }
    const states = events.flatMap((e) =>
      e.payload?.$case === 'task'
        ? [e.payload.value.status!.state]
        : e.payload?.$case === 'statusUpdate'
          ? [e.payload.value.status!.state]
          : [],
    );
    expect(states[0]).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(states.slice(1, -1).every((s) => s === TaskState.TASK_STATE_WORKING)).toBe(true);
    const notes = events.flatMap((e) =>
      e.payload?.$case === 'statusUpdate'
        ? (e.payload.value.status!.message?.parts.map((p) =>
            p.content?.$case === 'text' ? p.content.value : '',
          ) ?? [])
        : [],
    );
    expect(notes).toEqual(
      expect.arrayContaining(['calling weather/get_forecast', 'weather/get_forecast answered']),
    );
    expect(events.some((e) => e.payload?.$case === 'artifactUpdate')).toBe(true);

    const legacy = async (method: string, params: unknown) => {
      const response = await fetch(`${chat.url}/api/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(key) },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { result: Record<string, unknown> }).result;
    };
    const sent = await legacy('message/send', {
      message: {
        kind: 'message',
        messageId: crypto.randomUUID(),
        role: 'user',
        parts: [{ kind: 'text', text: `get_forecast {"address": "${ADDRESS}"}` }],
      },
    });
    expect(sent).toMatchObject({ kind: 'task', status: { state: 'completed' } });
    const got = await legacy('tasks/get', { id: sent.id });
    expect(got).toMatchObject({
      id: sent.id,
      status: { state: 'completed' },
      artifacts: [
        { parts: [{ kind: 'text', text: `The tool answered: ${forecastFor(ADDRESS)}` }] },
      ],
    });
  });

  // Params of the wrong type once reached the SDK and came back as -32603 with the text of
  // a JavaScript error ("taskId.trim is not a function") (docs/tools.md, "A2A").
  it.each([
    ['tasks/get', undefined, { id: true }, 'params.id must be a non-empty string'],
    ['tasks/get', undefined, { id: 'x', historyLength: -1 }, 'params.historyLength'],
    ['tasks/cancel', undefined, { id: 42 }, 'params.id must be a non-empty string'],
    ['tasks/resubscribe', undefined, { id: {} }, 'params.id'],
    ['message/send', undefined, { message: 'hi' }, 'params.message must be an object'],
    [
      'message/stream',
      undefined,
      { message: { role: 'user', parts: [] } },
      'params.message.messageId',
    ],
    ['tasks/pushNotificationConfig/get', undefined, { id: [] }, 'params.id'],
    ['tasks/get', undefined, [1], 'params must be an object'],
    ['GetTask', '1.0', { id: true }, 'params.id must be a non-empty string'],
    ['CancelTask', '1.0', { id: null }, 'params.id'],
    ['ListTasks', '1.0', { pageSize: 'many' }, 'params.pageSize must be a non-negative integer'],
    [
      'SendMessage',
      '1.0',
      { message: { messageId: 'm', role: 'ROLE_USER', parts: ['x'] } },
      'params.message.parts[0]',
    ],
  ])(
    'answers %s (version %s) with params %j as -32602 naming the parameter',
    async (method, version, params, says) => {
      const response = await fetch(`${chat.url}/api/a2a`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...bearer(key),
          ...(version ? { 'a2a-version': version } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method, params }),
      });
      expect(response.status).toBe(200);
      const answer = (await response.json()) as {
        id: unknown;
        error: { code: number; message: string };
      };
      expect(answer.id).toBe(9);
      expect(answer.error.code).toBe(-32602);
      expect(answer.error.message).toContain(says);
      expect(answer.error.message).not.toMatch(/is not a function|undefined|TypeError/);
    },
  );

  it('cancels a working task: its tool call stops and the task ends canceled', async () => {
    const started = Date.now();
    const stream = client.sendMessageStream(textMessage('slow_forecast {"delayMs": 8000}'));
    let taskId = '';
    const states: TaskState[] = [];
    for await (const event of stream) {
      if (event.payload?.$case === 'task') taskId = event.payload.value.id;
      if (event.payload?.$case === 'statusUpdate') {
        states.push(event.payload.value.status!.state);
        const note = event.payload.value.status!.message?.parts[0]?.content;
        if (note?.$case === 'text' && note.value === 'calling weather/slow_forecast') {
          const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: undefined });
          expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
        }
      }
    }
    expect(states.at(-1)).toBe(TaskState.TASK_STATE_CANCELED);
    expect(Date.now() - started).toBeLessThan(8000);
    const row = await taskRow(taskId);
    expect(row.transitions.map((t) => t.state)).toEqual(['submitted', 'working', 'canceled']);
    expect((await client.getTask({ tenant: '', id: taskId })).status?.state).toBe(
      TaskState.TASK_STATE_CANCELED,
    );
    // Canceling it again answers the canceled task.
    await expect(
      client.cancelTask({ tenant: '', id: taskId, metadata: undefined }),
    ).resolves.toMatchObject({
      status: expect.objectContaining({ state: TaskState.TASK_STATE_CANCELED }),
    });
  });

  it('fails a task with the reason when the decision model may not be used', async () => {
    const admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
    const models = (await chat.api.get('/api/admin/models').set(admin).expect(200)).body as {
      items: { id: number; name: string }[];
    };
    const modelId = models.items.find((model) => model.name === MODEL)!.id;
    await chat.api
      .patch(`/api/admin/models/${modelId}`)
      .set(admin)
      .send({ open: false })
      .expect(200);
    try {
      const task = (await client.sendMessage(textMessage('hello'))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      const reason = task.status?.message?.parts[0]?.content;
      expect(reason).toEqual({
        $case: 'text',
        value: expect.stringMatching(/^model_not_permitted: /),
      });
      expect((await taskRow(task.id)).transitions.map((t) => t.state)).toEqual([
        'submitted',
        'failed',
      ]);
    } finally {
      await chat.api
        .patch(`/api/admin/models/${modelId}`)
        .set(admin)
        .send({ open: true })
        .expect(200);
    }
  });

  describe("charging the key's user in credits (docs/credits.md)", () => {
    let admin: Record<string, string>;
    let modelId: number;
    const balanceOf = async (token: string): Promise<number> =>
      (await chat.api.get('/api/credits').set(bearer(token)).expect(200)).body.balance as number;
    const ledgerOf = async (token: string) =>
      (await chat.api.get('/api/credits/ledger?pageSize=100').set(bearer(token)).expect(200)).body
        .items as { kind: string; amount: number; reason: string; requestId: string }[];
    /** A user of their own with an A2A key, so each test starts from the registration grant. */
    const payer = async (name: string) => {
      const who = await newUser(chat.api, name);
      const created = await chat.api
        .post('/api/me/a2a-keys')
        .set(bearer(who.token))
        .send({ name })
        .expect(201);
      return { ...who, client: await clientFor(chat, created.body.key as string) };
    };

    beforeAll(async () => {
      admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
      const models = (await chat.api.get('/api/admin/models').set(admin).expect(200)).body as {
        items: { id: number; name: string }[];
      };
      modelId = models.items.find((model) => model.name === MODEL)!.id;
      await chat.api
        .patch(`/api/admin/models/${modelId}`)
        .set(admin)
        .send({ creditsPerCall: 10 })
        .expect(200);
    });

    afterAll(async () => {
      await chat.api
        .patch(`/api/admin/models/${modelId}`)
        .set(admin)
        .send({ creditsPerCall: 0 })
        .expect(200);
    });

    it('charges a completed task to the user whose key sent it', async () => {
      const caller = await payer('a2a-payer');
      const task = (await caller.client.sendMessage(textMessage('hello'))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(await balanceOf(caller.token)).toBe(90);
      const [spend] = await ledgerOf(caller.token);
      expect(spend).toMatchObject({
        kind: 'spend',
        amount: -10,
        reason: `A2A task ${task.id} by ${MODEL} (frozen)`,
      });
      // The account that owns nothing here pays nothing.
      expect(await balanceOf(user.token)).toBe(100);
    });

    it('fails the task with insufficient_credits before calling the model', async () => {
      const caller = await payer('a2a-poor');
      await chat.api
        .post(`/api/admin/users/${caller.id}/credits`)
        .set(admin)
        .send({ amount: -95, reason: 'test setup' })
        .expect(201);
      const before = (await mock.requests())[KEY] ?? 0;
      const task = (await caller.client.sendMessage(textMessage('hello'))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      expect(task.status?.message?.parts[0]?.content).toEqual({
        $case: 'text',
        value: expect.stringMatching(
          /^insufficient_credits: This message may cost up to 10 credits and your balance is 5/,
        ),
      });
      expect((await mock.requests())[KEY] ?? 0).toBe(before);
      expect(await balanceOf(caller.token)).toBe(5);
    });

    it('returns the whole freeze when the model call fails', async () => {
      const caller = await payer('a2a-refund');
      await mock.fault(KEY, { status: 500 }, 5);
      try {
        const task = (await caller.client.sendMessage(textMessage('hello'))) as Task;
        expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
      } finally {
        await mock.reset();
      }
      expect(await balanceOf(caller.token)).toBe(100);
      const [refund, spend] = await ledgerOf(caller.token);
      expect(refund).toMatchObject({ kind: 'refund', amount: 10, requestId: spend!.requestId });
      expect(spend).toMatchObject({ kind: 'spend', amount: -10 });
    });
  });

  describe('the decision model, from the chat settings', () => {
    it('is the one the settings name, applied without a restart; none refuses tasks', async () => {
      const admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
      // Until saved, the setting is CHAT_A2A_MODEL.
      expect(
        (await chat.api.get('/api/admin/chat-settings').set(admin).expect(200)).body,
      ).toMatchObject({ a2aModel: MODEL });
      await chat.api
        .put('/api/admin/chat-settings')
        .set(admin)
        .send({ a2aModel: null })
        .expect(200);
      try {
        const card = await chat.api.get('/api/a2a/agent-card.json').expect(200);
        expect(card.body.description).toMatch(/^Takes no tasks/);
        const task = (await client.sendMessage(textMessage('hello'))) as Task;
        expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED);
        expect(task.status?.message?.parts[0]?.content).toEqual({
          $case: 'text',
          value: expect.stringMatching(/^service_unavailable: No model answers A2A tasks/),
        });
      } finally {
        await chat.api
          .put('/api/admin/chat-settings')
          .set(admin)
          .send({ a2aModel: MODEL })
          .expect(200);
      }
      const card = await chat.api.get('/api/a2a/agent-card.json').expect(200);
      expect(card.body.description).toContain(MODEL);
      const task = (await client.sendMessage(textMessage('hello'))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    });
  });

  describe('delegation to a remote agent', () => {
    let remote: ChatHarness;
    let admin: Record<string, string>;
    let remoteKeyId: number;
    let remoteKey: string;
    const agents: Record<string, number> = {};

    beforeAll(async () => {
      // A second instance of this app is the remote agent. It shares the database, so it
      // sees the same registry: the message it gets names the MCP tool, which the mock
      // model prefers to delegating again.
      remote = await startChat({ CHAT_A2A_MODEL: MODEL, CHAT_TOOL_TIMEOUT_MS: '10000' });
      admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
      const made = await remote.api
        .post('/api/me/a2a-keys')
        .set(bearer(user.token))
        .send({ name: 'for the first instance' })
        .expect(201);
      remoteKeyId = made.body.id as number;
      remoteKey = made.body.key as string;
      for (const [name, cardUrl] of [
        ['remote', `${remote.url}/api/a2a/agent-card.json`],
        ['gone', `http://127.0.0.1:${await closedPort()}/.well-known/agent-card.json`],
      ]) {
        const created = await chat.api
          .post('/api/admin/a2a-agents')
          .set(admin)
          .send({
            name,
            cardUrl,
            headers: { authorization: `Bearer ${remoteKey}` },
          })
          .expect(201);
        agents[name!] = created.body.id as number;
      }
    }, 60_000);

    afterAll(async () => {
      for (const id of Object.values(agents)) {
        await chat.api.delete(`/api/admin/a2a-agents/${id}`).set(admin).expect(204);
      }
      await remote?.close();
    });

    // A card may name any URL as its endpoint; the agent's headers (its key) went there.
    it('refuses an agent whose card names an endpoint on another origin, and sends its headers nowhere else', async () => {
      const stolen: { url: string; headers: IncomingHttpHeaders }[] = [];
      const thief = createHttpServer((request, response) => {
        stolen.push({ url: request.url ?? '', headers: request.headers });
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
      thief.listen(0, '127.0.0.1');
      await once(thief, 'listening');
      const thiefOrigin = `http://127.0.0.1:${(thief.address() as AddressInfo).port}`;
      // The real card of the remote instance, its endpoints moved to the thief.
      const real = await (await fetch(`${remote.url}/api/a2a/agent-card.json`)).text();
      const forged = real.replaceAll(remote.url, thiefOrigin);
      expect(forged).toContain(thiefOrigin);
      const cards = createHttpServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' }).end(forged);
      });
      cards.listen(0, '127.0.0.1');
      await once(cards, 'listening');
      const cardsOrigin = `http://127.0.0.1:${(cards.address() as AddressInfo).port}`;
      let id: number | undefined;
      try {
        const created = await chat.api
          .post('/api/admin/a2a-agents')
          .set(admin)
          .send({
            name: 'forged',
            cardUrl: `${cardsOrigin}/.well-known/agent-card.json`,
            headers: { 'x-api-key': 'the-secret-key' },
          })
          .expect(201);
        id = created.body.id as number;
        const shown = await chat.api.get(`/api/admin/a2a-agents/${id}`).set(admin).expect(200);
        expect(shown.body.status).toEqual({
          reachable: false,
          lastError: expect.stringContaining(
            `names its endpoint ${thiefOrigin}/api/a2a, on another origin than the card's (${cardsOrigin})`,
          ),
          checkedAt: expect.any(String),
        });
        expect(stolen).toEqual([]);
      } finally {
        if (id !== undefined) {
          await chat.api.delete(`/api/admin/a2a-agents/${id}`).set(admin).expect(204);
        }
        for (const server of [thief, cards]) {
          server.closeAllConnections();
          server.close();
        }
      }
    });

    it('lists registered agents with their card and whether they answer; administrators only', async () => {
      const listed = await chat.api.get('/api/admin/a2a-agents').set(admin).expect(200);
      expect(listed.body.total).toBe(2);
      expect(listed.body.items).toEqual([
        expect.objectContaining({
          name: 'remote',
          tool: 'delegate_to_remote',
          headerNames: ['authorization'],
          status: { reachable: true, lastError: null, checkedAt: expect.any(String) },
          card: expect.objectContaining({ name: 'Switchyard chat', skills: expect.any(Array) }),
        }),
        expect.objectContaining({
          name: 'gone',
          status: expect.objectContaining({
            reachable: false,
            lastError: expect.stringContaining('ECONNREFUSED'),
          }),
          card: null,
        }),
      ]);
      expect(JSON.stringify(listed.body)).not.toContain(remoteKey);
      await chat.api.get('/api/admin/a2a-agents').set(bearer(user.token)).expect(403);
    });

    it('hands the task to the remote agent, streams its progress as tool steps, and completes with its answer', async () => {
      const events: StreamResponse[] = [];
      const inner = `get_forecast {\\"address\\": \\"${ADDRESS}\\"}`;
      for await (const event of client.sendMessageStream(
        textMessage(`delegate_to_remote {"message": "${inner}"}`),
      )) {
        events.push(event);
      }
      const notes = events.flatMap((e) =>
        e.payload?.$case === 'statusUpdate'
          ? (e.payload.value.status!.message?.parts.map((p) =>
              p.content?.$case === 'text' ? p.content.value : '',
            ) ?? [])
          : [],
      );
      expect(notes).toEqual(
        expect.arrayContaining([
          'calling remote/delegate_to_remote',
          'delegated task submitted',
          'delegated task completed',
          'remote/delegate_to_remote answered',
          'gone failed (server_unreachable)',
        ]),
      );
      const last = events.at(-1)!.payload;
      expect(last?.$case === 'statusUpdate' && last.value.status!.state).toBe(
        TaskState.TASK_STATE_COMPLETED,
      );
      const taskId = (events[0]!.payload!.value as Task).id;
      const task = await client.getTask({ tenant: '', id: taskId });
      expect(artifactText(task)).toBe(
        `The tool answered: The tool answered: ${forecastFor(ADDRESS)}`,
      );
      expect(task.artifacts[0]!.metadata!.toolSteps).toEqual([
        expect.objectContaining({ kind: 'connect', server: 'gone', ok: false }),
        expect.objectContaining({
          kind: 'delegate',
          server: 'remote',
          tool: 'delegate_to_remote',
          ok: true,
          result: `The tool answered: ${forecastFor(ADDRESS)}`,
        }),
      ]);
    });

    it('lets a conversation delegate in prompt mode, its progress streamed as tool steps', async () => {
      await chat.api
        .post('/api/admin/models')
        .set(admin)
        .send({ name: 'prompt-delegator', toolMode: 'prompt', open: true })
        .expect(201);
      const conversation = await chat.api
        .post('/api/conversations')
        .set(bearer(user.token))
        .send({ model: 'prompt-delegator' })
        .expect(201);
      const inner = `get_forecast {\\"address\\": \\"${ADDRESS}\\"}`;
      const reply = await sendMessage(chat, user.token, conversation.body.id as string, {
        content: `delegate_to_remote {"message": "${inner}"}`,
      });
      const names = reply.events.map((e) => e.event).filter((e) => e.startsWith('tool'));
      expect(names[0]).toBe('tools');
      expect(names).toContain('tool_progress');
      const call = reply.events.find((e) => e.event === 'tool_call')!.data;
      expect(call).toMatchObject({
        kind: 'delegate',
        server: 'remote',
        tool: 'delegate_to_remote',
      });
      const progress = reply.events.filter((e) => e.event === 'tool_progress').map((e) => e.data);
      expect(progress.at(-1)).toEqual({ id: call.id, state: 'completed' });
      const result = reply.events.filter((e) => e.event === 'tool_result').at(-1)!.data;
      expect(result).toMatchObject({
        kind: 'delegate',
        ok: true,
        result: `The tool answered: ${forecastFor(ADDRESS)}`,
      });
      expect(reply.events.at(-1)!.event).toBe('done');
      const saved = await chat.api
        .get(`/api/conversations/${conversation.body.id as string}/messages`)
        .set(bearer(user.token))
        .expect(200);
      const stored = (saved.body.items as { role: string; toolSteps: { kind: string }[] }[]).at(
        -1,
      )!;
      expect(stored.role).toBe('assistant');
      expect(stored.toolSteps.map((step) => step.kind)).toEqual(['connect', 'delegate']);
    });

    it('reports a revoked key of the remote agent as a failed tool step the model reads', async () => {
      await remote.api
        .post(`/api/me/a2a-keys/${remoteKeyId}/revoke`)
        .set(bearer(user.token))
        .expect(200);
      const task = (await client.sendMessage(
        textMessage('delegate_to_remote {"message": "anything"}'),
      )) as Task;
      // The card is public: the agent is reached, and its endpoint refuses the key.
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const [, step] = task.artifacts[0]!.metadata!.toolSteps as {
        ok: boolean;
        error: { code: string; message: string };
      }[];
      expect(step).toMatchObject({
        ok: false,
        error: { code: 'tool_failed', message: expect.stringMatching(/revoked/) },
      });
      expect(artifactText(task)).toMatch(/^The tool answered: Error \(tool_failed\).*revoked/);
    });
  });
});
