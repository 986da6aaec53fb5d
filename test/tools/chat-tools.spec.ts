import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { TaskState, type SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { inNamespace, UsageQueue } from '@switchyard/messaging';
import { waitFor, startApp, type AppProcess } from '@switchyard/testing';
import { forecastFor, startTestMcpServer, type TestMcpServer } from '@switchyard/testing/mcp';
import { Redis } from 'ioredis';
import { Stack, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// The chat app's tool loop through the real gateway: the chat app's API key record is a
// gateway token, so every model call of the loop is a metered /v1 request (a usage
// record queued for metering; no worker consumes them here). An MCP server
// built with the SDK's server side provides the tools; the mock provider's model uses them.
// The same stack then carries A2A: the web front publishes the chat app's card, and a
// second chat app process is the remote agent the first delegates to.

const UPSTREAM_KEY = 'sk-tools-upstream';
const ADDRESS = '221B Baker Street, London NW1 6XE';

interface Event {
  event: string;
  data: Record<string, unknown>;
}

function parseEvents(text: string): Event[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '' && !block.startsWith(':'))
    .map((block) => {
      const lines = block.split('\n');
      return {
        event: lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message',
        data: JSON.parse(
          lines
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n'),
        ) as Record<string, unknown>,
      };
    });
}

describe('chat tools through the gateway', () => {
  const stack = new Stack({ mockAccounts: UPSTREAM_KEY });
  const admin = { username: 'toolsadmin', password: `pw-${randomBytes(6).toString('hex')}` };
  let chat: AppProcess;
  let mcp: TestMcpServer;
  let tokenId: number;
  let adminToken: string;
  let redis: Redis;
  let usage: UsageQueue;

  async function call(method: string, route: string, token: string, body?: unknown) {
    const response = await fetch(`${chat.url}${route}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${text}`);
    return response.headers.get('content-type')?.startsWith('text/event-stream')
      ? parseEvents(text)
      : (JSON.parse(text || 'null') as unknown);
  }

  async function login(username: string, password: string): Promise<string> {
    const response = await fetch(`${chat.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
    return ((await response.json()) as { token: string }).token;
  }

  const meteredCalls = async (): Promise<{ model: string; status: number }[]> =>
    (await usage.getJobs(['waiting', 'prioritized', 'delayed', 'active', 'completed']))
      .flatMap((job) => UsageQueue.recordsOf(job))
      .filter((record) => record.tokenId === tokenId)
      .sort((a, b) => a.requestedAt - b.requestedAt)
      .map(({ model, status }) => ({ model, status }));

  beforeAll(async () => {
    await stack.start();
    redis = new Redis(stack.redisUrl, { maxRetriesPerRequest: null });
    usage = new UsageQueue({ connection: redis, prefix: inNamespace(stack.prefix, 'bull') });
    mcp = await startTestMcpServer();
    await stack.createChannel({ models: ['native-model', 'prompt-model'], keys: [UPSTREAM_KEY] });
    const token = await stack.createToken();
    tokenId = token.id;
    await stack.routable(token.key, 'native-model');
    chat = await startApp('chat', {
      env: {
        ...stack.env,
        CHAT_ADMIN_USERNAME: admin.username,
        CHAT_ADMIN_PASSWORD: admin.password,
        CHAT_A2A_MODEL: 'native-model',
      },
      readyPath: '/readyz',
    });
    adminToken = await login(admin.username, admin.password);
    await call('POST', '/api/admin/api-keys', adminToken, {
      address: stack.edge.url,
      key: token.key,
      purpose: 'chat',
    });
    for (const [name, toolMode] of [
      ['native-model', 'native'],
      ['prompt-model', 'prompt'],
    ]) {
      await call('POST', '/api/admin/models', adminToken, { name, toolMode, open: true });
    }
    await call('POST', '/api/admin/mcp-servers', adminToken, { name: 'weather', url: mcp.url });
  }, STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await chat?.stop();
    await mcp?.close();
    await usage?.close();
    redis?.disconnect();
    await stack.stop();
  });

  it.each([
    ['native-model', 'native'],
    ['prompt-model', 'prompt'],
  ])(
    '%s: runs the tool, streams and saves the steps, meters every model call',
    async (model, mode) => {
      const username = `u-${mode}-${Date.now()}`;
      const registered = await fetch(`${chat.url}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password: 'a-good-password' }),
      });
      expect(registered.status).toBe(201);
      const userToken = await login(username, 'a-good-password');
      const {
        items: [server],
      } = (await call('GET', '/api/mcp-servers', userToken)) as { items: { id: number }[] };
      const conversation = (await call('POST', '/api/conversations', userToken, {
        model,
        mcpServerIds: [server!.id],
      })) as { id: string };
      const before = (await meteredCalls()).length;
      mcp.calls.length = 0;

      const events = (await call(
        'POST',
        `/api/conversations/${conversation.id}/messages`,
        userToken,
        {
          content: `Weather at home? get_forecast {"address": "${ADDRESS}"}`,
        },
      )) as Event[];

      expect(events.filter((e) => e.event.startsWith('tool')).map((e) => e.event)).toEqual([
        'tools',
        'tool_call',
        'tool_result',
      ]);
      expect(events.find((e) => e.event === 'tools')!.data.mode).toBe(mode);
      expect(events.find((e) => e.event === 'tool_result')!.data).toMatchObject({
        server: 'weather',
        tool: 'get_forecast',
        arguments: { address: ADDRESS },
        ok: true,
        result: forecastFor(ADDRESS),
      });
      expect(events.at(-1)!.event).toBe('done');
      expect(mcp.calls.map((c) => [c.name, c.arguments])).toEqual([
        ['get_forecast', { address: ADDRESS }],
      ]);

      const { items: messages } = (await call(
        'GET',
        `/api/conversations/${conversation.id}/messages`,
        userToken,
      )) as { items: { content: string; status: string; toolSteps: Record<string, unknown>[] }[] };
      const reply = messages.at(-1)!;
      expect(reply.status).toBe('complete');
      expect(reply.content).toContain(`The tool answered: ${forecastFor(ADDRESS)}`);
      expect(reply.toolSteps).toEqual([
        expect.objectContaining({ tool: 'get_forecast', ok: true, result: forecastFor(ADDRESS) }),
      ]);

      // The call that asked for the tool and the one that answered: two metered requests.
      const metered = await waitFor(
        async () => {
          const rows = await meteredCalls();
          return rows.length >= before + 2 ? rows.slice(before) : undefined;
        },
        { what: 'two usage records' },
      );
      expect(metered).toEqual([
        { model, status: 200 },
        { model, status: 200 },
      ]);
    },
  );

  describe('A2A: a task through the web front, delegated to a second chat app', () => {
    let web: AppProcess;
    let remote: AppProcess;
    let userToken: string;
    let key: { id: number; key: string };
    let client: Client;
    const agentIds: number[] = [];

    const textMessage = (text: string): SendMessageRequest => ({
      tenant: '',
      message: {
        messageId: randomUUID(),
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
    });

    const clientWith = (secret: string): Promise<Client> => {
      const fetchImpl: typeof fetch = (input, init) => {
        const headers = new Headers(init?.headers);
        headers.set('authorization', `Bearer ${secret}`);
        return fetch(input, { ...init, headers });
      };
      return new ClientFactory({
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }).createFromUrl(web.url);
    };

    beforeAll(async () => {
      // The remote agent shares the stack's database, and so the registry below: the
      // message it is handed names the MCP tool, which the mock model prefers.
      [remote, web] = await Promise.all([
        startApp('chat', {
          env: { ...stack.env, CHAT_A2A_MODEL: 'native-model' },
          readyPath: '/readyz',
        }),
        startApp('web', { env: { CHAT_URL: chat.url } }),
      ]);
      const username = `a2a-${Date.now()}`;
      await fetch(`${web.url}/api/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password: 'a-good-password' }),
      });
      userToken = await login(username, 'a-good-password');
      key = (await call('POST', '/api/me/a2a-keys', userToken, { name: 'e2e' })) as typeof key;
      const remoteKey = (await call('POST', '/api/me/a2a-keys', userToken, {
        name: 'the first app',
      })) as typeof key;
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const closedPort = (closed.address() as AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      for (const [name, cardUrl] of [
        ['remote', `${remote.url}/api/a2a/agent-card.json`],
        ['gone', `http://127.0.0.1:${closedPort}/.well-known/agent-card.json`],
      ]) {
        const agent = (await call('POST', '/api/admin/a2a-agents', adminToken, {
          name,
          cardUrl,
          headers: { authorization: `Bearer ${remoteKey.key}` },
        })) as { id: number };
        agentIds.push(agent.id);
      }
      client = await clientWith(key.key);
    }, STACK_START_TIMEOUT_MS);

    afterAll(async () => {
      for (const id of agentIds) await call('DELETE', `/api/admin/a2a-agents/${id}`, adminToken);
      await Promise.all([web?.stop(), remote?.stop()]);
    });

    it("finds the card at the web front's well-known address, with its endpoint there", async () => {
      const card = await client.getAgentCard();
      expect(card.supportedInterfaces.map((i) => i.url)).toEqual([
        `${web.url}/api/a2a`,
        `${web.url}/api/a2a`,
      ]);
      expect(card.skills.map((skill) => skill.id)).toEqual([
        'weather/get_forecast',
        'weather/slow_forecast',
      ]);
    });

    it('delegates to the remote agent, streams its progress, and completes with its answer', async () => {
      const inner = `get_forecast {\\"address\\": \\"${ADDRESS}\\"}`;
      const events: StreamResponse[] = [];
      for await (const event of client.sendMessageStream(
        textMessage(`delegate_to_remote {"message": "${inner}"}`),
      )) {
        events.push(event);
      }
      const states = events.flatMap((e) =>
        e.payload?.$case === 'task' || e.payload?.$case === 'statusUpdate'
          ? [e.payload.value.status!.state]
          : [],
      );
      expect(states[0]).toBe(TaskState.TASK_STATE_SUBMITTED);
      expect(states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
      const notes = events.flatMap((e) =>
        e.payload?.$case === 'statusUpdate'
          ? (e.payload.value.status!.message?.parts ?? []).map((p) =>
              p.content?.$case === 'text' ? p.content.value : '',
            )
          : [],
      );
      expect(notes).toEqual(
        expect.arrayContaining([
          'gone failed (server_unreachable)',
          'calling remote/delegate_to_remote',
          'delegated task working',
          'delegated task completed',
          'remote/delegate_to_remote answered',
        ]),
      );

      const taskId = (events[0]!.payload!.value as Task).id;
      const task = await client.getTask({ tenant: '', id: taskId });
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const answer = task.artifacts[0]!.parts.map((p) =>
        p.content?.$case === 'text' ? p.content.value : '',
      );
      expect(answer).toEqual([`The tool answered: The tool answered: ${forecastFor(ADDRESS)}`]);
      expect(task.artifacts[0]!.metadata!.toolSteps).toEqual([
        expect.objectContaining({ kind: 'connect', server: 'gone', ok: false }),
        expect.objectContaining({ kind: 'delegate', server: 'remote', ok: true }),
      ]);
    });

    it('refuses a revoked key with a JSON-RPC error that says so', async () => {
      await call('POST', `/api/me/a2a-keys/${key.id}/revoke`, userToken);
      await expect(client.sendMessage(textMessage('hello'))).rejects.toThrow(/A2A key was revoked/);
    });
  });
});
