import { startApp, type AppProcess } from '@switchyard/testing';
import request from 'supertest';
import { AdminHarness, channelBody, type Session } from '../testing/admin-harness.fixture.js';

// POST /api/channels/:id/test against a real mock-upstream process with a healthy, a
// banned and a hanging account.

const HEALTHY = 'mock-healthy-account-0001';
const BANNED = 'mock-banned-account-0002';
const SLOW = 'mock-slow-account-0003';
/** AWS's documented example key pair, an account of the mock; and the same id, wrong secret. */
const AWS_KEY_PAIR = 'AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const AWS_WRONG_SECRET = 'AKIAIOSFODNN7EXAMPLE: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';

describe('channel test', () => {
  let h: AdminHarness;
  let upstream: AppProcess;
  let admin: Session;

  beforeAll(async () => {
    upstream = await startApp('mock-upstream', {
      env: { MOCK_ACCOUNTS: `${HEALTHY},${BANNED}:0:0:banned,${SLOW}`, LOG_LEVEL: 'warn' },
    });
    // A key pair holds colons, which MOCK_ACCOUNTS cannot: it is added through the control API.
    await request(upstream.url)
      .put(`/_mock/accounts/${encodeURIComponent(AWS_KEY_PAIR)}`)
      .send({})
      .expect(200);
    h = await AdminHarness.start({ name: 'chtest', env: { CHANNEL_TEST_TIMEOUT_MS: '500' } });
    admin = await h.session('admin');
  });

  afterAll(async () => {
    await h?.close();
    await upstream?.stop();
  });

  const channel = async (overrides: Record<string, unknown> = {}) =>
    (
      await h
        .api(admin.token)
        .post(
          '/api/channels',
          channelBody({
            kind: 'aggregated',
            baseUrl: `${upstream.url}/v1`,
            keys: [HEALTHY, BANNED, SLOW],
            models: ['gpt-4-gizmo-*', 'gpt-4o'],
            modelMapping: { 'gpt-4o': 'gpt-4o-mini' },
            ...overrides,
          }),
        )
        .expect(201)
    ).body as { id: number; keys: { id: number; lastFour: string }[] };

  it('reports the reply, status and latency through a healthy key, with the model mapped', async () => {
    const { id, keys } = await channel();
    const response = await h.api(admin.token).post(`/api/channels/${id}/test`, {}).expect(200);
    expect(response.body).toEqual({
      ok: true,
      status: 200,
      latencyMs: expect.any(Number),
      model: 'gpt-4o',
      upstreamModel: 'gpt-4o-mini',
      answeredModel: 'gpt-4o-mini',
      keyId: keys[0]!.id,
      reply: 'Echo: ping',
    });
    expect(response.body.latencyMs).toBeGreaterThanOrEqual(0);
    const audit = await h.auditOf('channel', id);
    expect(audit.at(-1)).toMatchObject({
      action: 'channel.test',
      details: { ok: true, status: 200, keyId: keys[0]!.id, model: 'gpt-4o' },
    });
  });

  it("reports a banned key's error from the upstream", async () => {
    const { id, keys } = await channel();
    const banned = keys.find((k) => k.lastFour === BANNED.slice(-4))!;
    const response = await h
      .api(admin.token)
      .post(`/api/channels/${id}/test`, { keyId: banned.id, model: 'gpt-4-gizmo-g-1' })
      .expect(200);
    expect(response.body).toEqual({
      ok: false,
      status: 401,
      latencyMs: expect.any(Number),
      model: 'gpt-4-gizmo-g-1',
      upstreamModel: 'gpt-4-gizmo-g-1',
      keyId: banned.id,
      error: { code: 'account_deactivated', message: 'This account has been deactivated.' },
    });
    expect(response.text).not.toContain(BANNED);
  });

  it('reports a timeout when the upstream does not answer in time', async () => {
    const { id, keys } = await channel();
    await request(upstream.url)
      .post('/_mock/faults')
      .send({ key: SLOW, hang: true, times: 1 })
      .expect(204);
    const slow = keys.find((k) => k.lastFour === SLOW.slice(-4))!;
    const response = await h
      .api(admin.token)
      .post(`/api/channels/${id}/test`, { keyId: slow.id })
      .expect(200);
    expect(response.body).toMatchObject({
      ok: false,
      status: null,
      error: { code: 'timeout', message: 'No complete answer within 500 ms' },
    });
  });

  it('reports a refused connection', async () => {
    const { id } = await channel({ baseUrl: 'http://127.0.0.1:9' });
    const response = await h.api(admin.token).post(`/api/channels/${id}/test`, {}).expect(200);
    expect(response.body).toMatchObject({
      ok: false,
      status: null,
      error: { code: 'connect_error', message: expect.stringContaining('ECONNREFUSED') },
    });
  });

  it('never passes on the key, even when the upstream quotes it back', async () => {
    const { id } = await channel();
    await request(upstream.url)
      .post('/_mock/faults')
      .send({ key: HEALTHY, reply: `I was called with ${HEALTHY}`, times: 1 })
      .expect(204);
    const response = await h.api(admin.token).post(`/api/channels/${id}/test`, {}).expect(200);
    expect(response.body.reply).toBe('I was called with [redacted]');
    expect(response.text).not.toContain(HEALTHY);
  });

  it("speaks the channel's provider: a gemini reply, an azure refusal in OpenAI's words, a signed bedrock reply", async () => {
    const gemini = await channel({
      provider: 'gemini',
      baseUrl: upstream.url,
      keys: [HEALTHY],
      models: ['gemini-2.5-flash'],
      modelMapping: {},
    });
    const replied = await h
      .api(admin.token)
      .post(`/api/channels/${gemini.id}/test`, {})
      .expect(200);
    expect(replied.body).toMatchObject({
      ok: true,
      status: 200,
      reply: 'Echo: ping',
      answeredModel: 'gemini-2.5-flash',
    });
    const azure = await channel({
      provider: 'azure',
      providerSettings: { apiVersion: '2024-10-21' },
      baseUrl: upstream.url,
      keys: [BANNED],
      models: ['gpt-4o'],
    });
    const refused = await h.api(admin.token).post(`/api/channels/${azure.id}/test`, {}).expect(200);
    expect(refused.body).toMatchObject({
      ok: false,
      status: 401,
      upstreamModel: 'gpt-4o-mini',
      error: { code: 'invalid_api_key', message: expect.stringContaining('Access denied') },
    });
    // Bedrock: the ping is a Converse request signed with the key pair, which the mock
    // checks against the account's secret.
    const bedrock = await channel({
      provider: 'bedrock',
      providerSettings: { region: 'us-east-1' },
      baseUrl: upstream.url,
      keys: [AWS_KEY_PAIR, AWS_WRONG_SECRET],
      models: ['claude'],
      modelMapping: { claude: 'anthropic.claude-3-haiku-20240307-v1:0' },
    });
    const signed = await h
      .api(admin.token)
      .post(`/api/channels/${bedrock.id}/test`, {})
      .expect(200);
    expect(signed.body).toMatchObject({
      ok: true,
      status: 200,
      reply: 'Echo: ping',
      upstreamModel: 'anthropic.claude-3-haiku-20240307-v1:0',
    });
    const wrong = await h
      .api(admin.token)
      .post(`/api/channels/${bedrock.id}/test`, { keyId: bedrock.keys[1]!.id })
      .expect(200);
    expect(wrong.body).toMatchObject({
      ok: false,
      status: 403,
      error: { message: expect.stringContaining('signature we calculated does not match') },
    });
    expect(JSON.stringify([signed.body, wrong.body])).not.toContain('wJalrXUtnFEMI');
  });

  it('needs a model when the channel lists only prefixes, and a key of its own', async () => {
    const { id } = await channel({ models: ['gpt-4-gizmo-*'], modelMapping: {} });
    const noModel = await h.api(admin.token).post(`/api/channels/${id}/test`, {}).expect(400);
    expect(noModel.body.error.fields[0].field).toBe('model');
    await h
      .api(admin.token)
      .post(`/api/channels/${id}/test`, { model: 'gpt-4-gizmo-x', keyId: 2147483000 })
      .expect(404);
  });
  it("lists an upstream's models, before and after the channel is saved, without echoing the key", async () => {
    const expected = ['dall-e-3', 'gpt-3.5-turbo', 'gpt-4-all', 'gpt-4o', 'gpt-4o-mini'];
    const before = await h
      .api(admin.token)
      .post('/api/channels/upstream-models', { baseUrl: `${upstream.url}/v1`, key: HEALTHY })
      .expect(200);
    expect(before.body).toMatchObject({ ok: true, status: 200 });
    expect(before.body.models).toEqual(expect.arrayContaining(expected));
    const { id } = await channel();
    const saved = await h.api(admin.token).post(`/api/channels/${id}/upstream-models`).expect(200);
    expect(saved.body.models).toEqual(before.body.models);
    expect(JSON.stringify([before.body, saved.body])).not.toContain(HEALTHY);

    const unreachable = await h
      .api(admin.token)
      .post('/api/channels/upstream-models', { baseUrl: 'http://127.0.0.1:9', key: HEALTHY })
      .expect(200);
    expect(unreachable.body).toMatchObject({
      ok: false,
      models: [],
      error: { code: 'connect_error' },
    });

    const invalid = await h
      .api(admin.token)
      .post('/api/channels/upstream-models', { baseUrl: 'ftp://x', key: 'short' })
      .expect(400);
    expect(invalid.body.error.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'baseUrl',
      'key',
    ]);
    const viewer = await h.session('viewer');
    await h
      .api(viewer.token)
      .post('/api/channels/upstream-models', { baseUrl: upstream.url, key: HEALTHY })
      .expect(403);
  });

  it("lists each provider's models in its own way: Anthropic's, Gemini's (chat and embeddings only), Bedrock's signed list, and says why Azure has none", async () => {
    const list = (body: Record<string, unknown>) =>
      h.api(admin.token).post('/api/channels/upstream-models', body).expect(200);
    const anthropic = await list({ baseUrl: upstream.url, key: HEALTHY, provider: 'anthropic' });
    expect(anthropic.body).toMatchObject({
      ok: true,
      models: ['claude-3-5-haiku-20241022', 'claude-sonnet-4-5-20250929'],
    });
    const gemini = await list({ baseUrl: upstream.url, key: HEALTHY, provider: 'gemini' });
    expect(gemini.body).toMatchObject({
      ok: true,
      models: ['gemini-2.5-flash', 'gemini-embedding-001'],
    });
    const bedrockBody = {
      baseUrl: upstream.url,
      provider: 'bedrock',
      providerSettings: { region: 'us-east-1' },
    };
    const bedrock = await list({ ...bedrockBody, key: AWS_KEY_PAIR });
    expect(bedrock.body).toMatchObject({
      ok: true,
      status: 200,
      models: [
        'amazon.nova-lite-v1:0',
        'amazon.titan-embed-text-v2:0',
        'anthropic.claude-3-haiku-20240307-v1:0',
      ],
    });
    const wrong = await list({ ...bedrockBody, key: AWS_WRONG_SECRET });
    expect(wrong.body).toMatchObject({
      ok: false,
      status: 403,
      error: { message: expect.stringContaining('signature we calculated does not match') },
    });
    expect(JSON.stringify([bedrock.body, wrong.body])).not.toContain('wJalrXUtnFEMI');
    const malformed = await h
      .api(admin.token)
      .post('/api/channels/upstream-models', { ...bedrockBody, key: HEALTHY })
      .expect(400);
    expect(malformed.body.error.fields[0].field).toBe('key');
    const azure = await list({ baseUrl: upstream.url, key: HEALTHY, provider: 'azure' });
    expect(azure.body).toMatchObject({
      ok: false,
      models: [],
      error: { code: 'unsupported_provider', message: expect.stringContaining('model mapping') },
    });
    // A saved channel is asked with its own provider and key.
    const saved = await channel({
      provider: 'bedrock',
      providerSettings: { region: 'us-east-1' },
      baseUrl: upstream.url,
      keys: [AWS_KEY_PAIR],
      models: ['claude'],
      modelMapping: {},
    });
    const savedList = await h
      .api(admin.token)
      .post(`/api/channels/${saved.id}/upstream-models`)
      .expect(200);
    expect(savedList.body.models).toEqual(bedrock.body.models);
  });
});
