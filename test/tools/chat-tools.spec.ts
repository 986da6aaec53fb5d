import { randomBytes } from 'node:crypto';
import { inNamespace, UsageQueue } from '@switchyard/messaging';
import { eventually, startApp, type AppProcess } from '@switchyard/testing';
import { forecastFor, startTestMcpServer, type TestMcpServer } from '@switchyard/testing/mcp';
import { Redis } from 'ioredis';
import { Stack } from '../support/stack.js';

// The chat app's tool loop through the real gateway: the chat app's API key record is a
// gateway token, so every model call of the loop is a metered /v1 request (a usage
// record queued for metering; no worker consumes them here). An MCP server
// built with the SDK's server side provides the tools; the mock provider's model uses them.

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
      .map((job) => job.data)
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
  }, 180_000);

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
      const metered = await eventually(
        async () => {
          const rows = await meteredCalls();
          return rows.length >= before + 2 ? rows.slice(before) : undefined;
        },
        20_000,
        'two usage records',
      );
      expect(metered).toEqual([
        { model, status: 200 },
        { model, status: 200 },
      ]);
    },
  );
});
