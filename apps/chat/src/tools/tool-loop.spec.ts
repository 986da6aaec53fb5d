import { startTestMcpServer, forecastFor, type TestMcpServer } from '@switchyard/testing/mcp';
import {
  ADMIN,
  bearer,
  login,
  newUser,
  resetChatData,
  scrapedValue,
  sendMessage,
  startChat,
  startMockUpstream,
  type ChatHarness,
  type MockUpstream,
  type ReplyEvent,
} from '../testing/chat-harness.fixture.js';
import { MAX_TOOL_STEPS } from './tool-loop.service.js';

// The tool loop against a real MCP server (the SDK's server side) and the mock provider's
// deterministic tool-using model, in both modes, and the ways it fails.

const KEY = 'sk-mock-tools';
const TOOL_TIMEOUT_MS = 700;
/** Nothing listens on the discard port: connections are refused at once. */
const CLOSED = 'http://127.0.0.1:9/mcp';
const ADDRESS = '10 Downing Street, London SW1A 2AA';

interface SavedStep {
  kind: string;
  server: string;
  tool?: string;
  uri?: string;
  arguments?: unknown;
  ok: boolean;
  result?: string;
  error?: { code: string; message: string };
  durationMs: number;
}

interface UpstreamRequest {
  body: {
    tools?: { function: { name: string } }[];
    messages: { role: string; content: string | null; tool_call_id?: string }[];
  };
}

describe('the tool loop', () => {
  let chat: ChatHarness;
  let mock: MockUpstream;
  let mcp: TestMcpServer;
  let admin: Record<string, string>;
  let user: { token: string };
  const servers: Record<string, number> = {};

  const upstreamRequests = async (): Promise<UpstreamRequest[]> =>
    (await (await fetch(`${mock.url}/_mock/accounts/${KEY}/requests`)).json()) as UpstreamRequest[];

  const converse = async (model: string, serverNames: string[], content: string) => {
    const created = await chat.api
      .post('/api/conversations')
      .set(bearer(user.token))
      .send({ model, mcpServerIds: serverNames.map((name) => servers[name]) })
      .expect(201);
    const id = created.body.id as string;
    const reply = await sendMessage(chat, user.token, id, { content });
    const saved = (
      await chat.api.get(`/api/conversations/${id}/messages`).set(bearer(user.token)).expect(200)
    ).body.items as {
      role: string;
      content: string;
      status: string;
      errorCode: string | null;
      toolSteps: SavedStep[];
      usage: { promptTokens: number };
    }[];
    return { events: reply.events, saved: saved.at(-1)! };
  };

  const named = (events: ReplyEvent[], name: string) =>
    events.filter((e) => e.event === name).map((e) => e.data);
  const text = (events: ReplyEvent[]) =>
    named(events, 'delta')
      .map((d) => d.content)
      .join('');

  beforeAll(async () => {
    await resetChatData();
    mcp = await startTestMcpServer();
    mock = await startMockUpstream([KEY]);
    chat = await startChat({ CHAT_TOOL_TIMEOUT_MS: String(TOOL_TIMEOUT_MS) });
    admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
    await chat.api
      .post('/api/admin/api-keys')
      .set(admin)
      .send({ address: mock.url, key: KEY })
      .expect(201);
    for (const model of [
      { name: 'native-model', toolMode: 'native' },
      { name: 'prompt-model', toolMode: 'prompt' },
      { name: 'plain-model', toolMode: 'off' },
    ]) {
      await chat.api
        .post('/api/admin/models')
        .set(admin)
        .send({ ...model, open: true })
        .expect(201);
    }
    for (const [name, url] of [
      ['weather', mcp.url],
      ['down', CLOSED],
    ]) {
      const created = await chat.api
        .post('/api/admin/mcp-servers')
        .set(admin)
        .send({ name, url })
        .expect(201);
      servers[name!] = created.body.id as number;
    }
    user = await newUser(chat.api, 'tools');
    // Three servers start here; on a busy machine that alone can take most of 30 s.
  }, 120_000);

  afterAll(async () => {
    await chat?.close();
    await mock?.stop();
    await mcp?.close();
  });

  beforeEach(async () => {
    await mock.reset();
    mcp.calls.length = 0;
  });

  it('native mode: tools as the tools parameter, the call run, its result sent back as a tool message', async () => {
    const { events, saved } = await converse(
      'native-model',
      ['weather'],
      `What is the weather? use get_forecast {"address": "${ADDRESS}"}`,
    );
    expect(events.map((e) => e.event)).toEqual([
      'tools',
      'tool_call',
      'tool_result',
      ...Array<string>(events.length - 4).fill('delta'),
      'done',
    ]);
    expect(named(events, 'tools')[0]).toMatchObject({
      mode: 'native',
      servers: [{ name: 'weather', reachable: true }],
      definitionTokens: expect.any(Number),
    });
    expect(named(events, 'tool_call')[0]).toMatchObject({
      kind: 'tool',
      server: 'weather',
      tool: 'get_forecast',
      arguments: { address: ADDRESS },
    });
    const step = named(events, 'tool_result')[0]!;
    expect(step).toMatchObject({ ok: true, result: forecastFor(ADDRESS) });
    expect(step.durationMs).toEqual(expect.any(Number));
    expect(text(events)).toBe(`The tool answered: ${forecastFor(ADDRESS)}`);

    expect(mcp.calls.map((c) => [c.name, c.arguments])).toEqual([
      ['get_forecast', { address: ADDRESS }],
    ]);
    const [first, second] = await upstreamRequests();
    expect(first!.body.tools!.map((t) => t.function.name)).toEqual([
      'weather__get_forecast',
      'weather__slow_forecast',
    ]);
    expect(second!.body.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: forecastFor(ADDRESS),
    });

    expect(saved).toMatchObject({ role: 'assistant', status: 'complete', content: text(events) });
    expect(saved.toolSteps).toEqual([expect.objectContaining({ ...step, id: expect.any(String) })]);
    // Two model calls, both counted in the reply's usage.
    expect(await upstreamRequests()).toHaveLength(2);
    const done = named(events, 'done')[0]!;
    expect(done.usage).toEqual(saved.usage);
  });

  it('prompt mode: definitions in the system prompt, the command parsed, the result as the next user turn', async () => {
    const { events, saved } = await converse(
      'prompt-model',
      ['weather'],
      `use get_forecast {"address": "${ADDRESS}"}`,
    );
    expect(named(events, 'tool_call')[0]).toMatchObject({
      server: 'weather',
      tool: 'get_forecast',
      arguments: { address: ADDRESS },
    });
    expect(named(events, 'tool_result')[0]).toMatchObject({
      ok: true,
      result: forecastFor(ADDRESS),
    });
    expect(text(events)).toContain('<use_mcp_tool>');
    expect(text(events)).toContain(`The tool answered: ${forecastFor(ADDRESS)}`);
    expect(mcp.calls).toHaveLength(1);

    const [first, second] = await upstreamRequests();
    expect(first!.body.tools).toBeUndefined();
    const system = first!.body.messages[0]!;
    expect(system.role).toBe('system');
    expect(system.content).toContain('### Tool `get_forecast` on server `weather`');
    expect(system.content).toContain(
      '- address (string, required): Street address, up to 84 bytes',
    );
    expect(system.content).toContain('"maxLength":84');
    expect(system.content).toContain('<access_mcp_resource>');
    expect(second!.body.messages.at(-1)).toEqual({
      role: 'user',
      content: `[use_mcp_tool for 'weather/get_forecast'] Result:\n${forecastFor(ADDRESS)}`,
    });
    expect(saved.toolSteps).toHaveLength(1);
    expect(saved.status).toBe('complete');
  });

  it('prompt mode reads a resource', async () => {
    const { events, saved } = await converse('prompt-model', ['weather'], 'read weather://cities');
    expect(named(events, 'tool_result')[0]).toMatchObject({
      kind: 'resource',
      uri: 'weather://cities',
      ok: true,
      result: 'Paris, Lyon, Nantes',
    });
    expect(mcp.calls.map((c) => [c.method, c.name])).toEqual([
      ['resources/read', 'weather://cities'],
    ]);
    expect(saved.content).toContain('The tool answered: Paris, Lyon, Nantes');
  });

  it('refuses arguments the input schema refuses without calling the server, and tells the model', async () => {
    const tooLong = 'x'.repeat(85);
    const { events, saved } = await converse(
      'native-model',
      ['weather'],
      `get_forecast {"address": "${tooLong}"}`,
    );
    const step = named(events, 'tool_result')[0]!;
    expect(step).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
    expect((step.error as { message: string }).message).toMatch(/84/);
    expect(mcp.calls).toEqual([]);
    expect(text(events)).toMatch(/^The tool answered: Error \(invalid_arguments\)/);
    expect(saved.status).toBe('complete');
  });

  it('gives up on a tool call that takes longer than the timeout', async () => {
    const { events, saved } = await converse(
      'native-model',
      ['weather'],
      'slow_forecast {"delayMs": 5000}',
    );
    const step = named(events, 'tool_result')[0]!;
    expect(step).toMatchObject({ ok: false, error: { code: 'tool_timeout' } });
    expect(step.durationMs as number).toBeGreaterThanOrEqual(TOOL_TIMEOUT_MS - 50);
    expect(mcp.calls.map((c) => c.name)).toEqual(['slow_forecast']);
    expect(saved.toolSteps[0]!.error!.code).toBe('tool_timeout');
  });

  it('says which server is unreachable and answers with the others', async () => {
    const counted = () =>
      Promise.all([
        scrapedValue(chat, 'chat_tool_steps_total', {
          kind: 'connect',
          outcome: 'server_unreachable',
        }),
        scrapedValue(chat, 'chat_tool_steps_total', { kind: 'tool', outcome: 'ok' }),
        scrapedValue(chat, 'chat_tool_step_duration_seconds_count', { kind: 'tool' }),
      ]);
    const before = await counted();
    const { events, saved } = await converse(
      'native-model',
      ['weather', 'down'],
      `get_forecast {"address": "${ADDRESS}"}`,
    );
    expect(named(events, 'tools')[0]!.servers).toEqual([
      { name: 'weather', reachable: true },
      { name: 'down', reachable: false, error: expect.stringMatching(/ECONNREFUSED|fetch failed/) },
    ]);
    expect(saved.toolSteps[0]).toMatchObject({
      kind: 'connect',
      server: 'down',
      ok: false,
      error: { code: 'server_unreachable' },
    });
    expect(saved.toolSteps[1]).toMatchObject({ server: 'weather', ok: true });
    expect(saved.status).toBe('complete');
    // Both steps are in the metrics, and the user who sent the message is active.
    expect(await counted()).toEqual(before.map((value) => value + 1));
    expect(await scrapedValue(chat, 'chat_active_users', { window: '5m' })).toBeGreaterThanOrEqual(
      1,
    );
  });

  it(`stops a model that keeps calling tools after ${MAX_TOOL_STEPS} rounds`, async () => {
    const { events, saved } = await converse(
      'native-model',
      ['weather'],
      `call get_forecast {"address": "${ADDRESS}"} repeatedly`,
    );
    expect(named(events, 'tool_result')).toHaveLength(MAX_TOOL_STEPS);
    expect(mcp.calls).toHaveLength(MAX_TOOL_STEPS);
    expect(await upstreamRequests()).toHaveLength(MAX_TOOL_STEPS + 1);
    const error = events.at(-1)!;
    expect(error.event).toBe('error');
    expect(error.data.code).toBe('tool_step_limit');
    expect(saved).toMatchObject({ status: 'failed', errorCode: 'tool_step_limit' });
    expect(saved.toolSteps).toHaveLength(MAX_TOOL_STEPS);
  });

  it('leaves tools out for a model whose tool mode is off', async () => {
    const { events } = await converse('plain-model', ['weather'], 'get_forecast {"address": "x"}');
    expect(events.map((e) => e.event)).not.toContain('tools');
    expect(text(events)).toBe('Echo: get_forecast {"address": "x"}');
    const [request] = await upstreamRequests();
    expect(request!.body.tools).toBeUndefined();
  });
});
