import { query } from '@switchyard/testing';
import { AdminHarness, channelBody, randomSuffix } from '../testing/admin-harness.fixture.js';

// The metering worker writes UsageLog rows; here they are inserted directly.

describe('usage', () => {
  let h: AdminHarness;
  let api: ReturnType<AdminHarness['api']>;
  let tokenA: number;
  let tokenB: number;
  let channel: number;

  const insert = (row: {
    tokenId: number;
    channelId: number | null;
    model: string;
    status: number;
    prompt: number;
    completion: number;
    cost: number;
    at: string;
  }) =>
    query(
      h.databaseUrl,
      `INSERT INTO "UsageLog" ("requestId", "tokenId", "channelId", endpoint, model, "promptTokens",
         "completionTokens", cost, status, "latencyMs", "requestedAt")
       VALUES ($1, $2, $3, 'chat.completions', $4, $5, $6, $7, $8, 120, $9)`,
      [
        `req-${randomSuffix()}${randomSuffix()}`,
        row.tokenId,
        row.channelId,
        row.model,
        row.prompt,
        row.completion,
        row.cost,
        row.status,
        row.at,
      ],
    );

  beforeAll(async () => {
    h = await AdminHarness.start({ name: 'usage' });
    const viewer = await h.session('viewer');
    const admin = await h.session('admin');
    api = h.api(viewer.token);
    const editor = h.api(admin.token);
    const token = async (name: string) =>
      (await editor.post('/api/tokens', { name, expiresAt: null, quota: null }).expect(201)).body
        .id as number;
    tokenA = await token('usage-a');
    tokenB = await token('usage-b');
    channel = (await editor.post('/api/channels', channelBody({ name: 'usage-ch' })).expect(201))
      .body.id;
    const base = { channelId: channel, prompt: 10, completion: 5 };
    await insert({
      ...base,
      tokenId: tokenA,
      model: 'gpt-4o',
      status: 200,
      cost: 100,
      at: '2026-03-01T10:00:00Z',
    });
    await insert({
      ...base,
      tokenId: tokenA,
      model: 'gpt-4o',
      status: 429,
      cost: 0,
      at: '2026-03-01T23:59:59Z',
    });
    await insert({
      ...base,
      tokenId: tokenA,
      model: 'gpt-4o-mini',
      status: 200,
      cost: 7,
      at: '2026-03-02T00:00:00Z',
    });
    await insert({
      ...base,
      tokenId: tokenB,
      model: 'gpt-4o',
      status: 200,
      cost: 50,
      at: '2026-03-02T12:00:00Z',
    });
    await insert({
      ...base,
      tokenId: tokenB,
      channelId: null,
      model: 'gpt-4o',
      status: 503,
      cost: 0,
      at: '2026-03-03T08:00:00Z',
      prompt: 0,
      completion: 0,
    });
  });

  afterAll(async () => {
    await h.close();
  });

  it('counts at most 10,000 matches, and says when more match', async () => {
    const editor = h.api((await h.session('admin')).token);
    const busy = (
      await editor
        .post('/api/tokens', { name: 'usage-busy', expiresAt: null, quota: null })
        .expect(201)
    ).body.id as number;
    const rows = async (count: number) =>
      query(
        h.databaseUrl,
        `INSERT INTO "UsageLog" ("requestId", "tokenId", endpoint, model, "promptTokens",
           "completionTokens", cost, status, "latencyMs", "requestedAt")
         SELECT 'busy-' || $1::int || '-' || g, $1, 'chat.completions', 'gpt-4o', 1, 1, 1, 200, 1,
                '2026-04-01T00:00:00Z'::timestamptz + g * interval '1 second'
         FROM generate_series(1, $2::int) g`,
        [busy, count],
      );
    await rows(10_000);
    expect((await api.get(`/api/usage/logs?tokenId=${busy}`).expect(200)).body).toMatchObject({
      total: 10_000,
      totalCapped: false,
    });
    await query(h.databaseUrl, `DELETE FROM "UsageLog" WHERE "tokenId" = $1`, [busy]);
    await rows(10_001);
    const capped = await api.get(`/api/usage/logs?tokenId=${busy}&pageSize=5`).expect(200);
    expect(capped.body).toMatchObject({ total: 10_000, totalCapped: true });
    // Newest first still, whatever was counted.
    expect(capped.body.items[0].requestedAt).toBe('2026-04-01T02:46:41.000Z');
    await query(h.databaseUrl, `DELETE FROM "UsageLog" WHERE "tokenId" = $1`, [busy]);
  });

  it('lists logs newest first, with names, filtered and paged', async () => {
    const all = await api.get(`/api/usage/logs?channelId=${channel}`).expect(200);
    expect(all.body).toMatchObject({ total: 4, totalCapped: false });
    expect(all.body.items.map((l: { requestedAt: string }) => l.requestedAt)).toEqual([
      '2026-03-02T12:00:00.000Z',
      '2026-03-02T00:00:00.000Z',
      '2026-03-01T23:59:59.000Z',
      '2026-03-01T10:00:00.000Z',
    ]);
    expect(all.body.items[0]).toMatchObject({
      tokenId: tokenB,
      tokenName: 'usage-b',
      channelId: channel,
      channelName: 'usage-ch',
      model: 'gpt-4o',
      promptTokens: 10,
      completionTokens: 5,
      cost: 50,
      status: 200,
      endpoint: 'chat.completions',
    });

    const count = async (filter: string) =>
      (await api.get(`/api/usage/logs?${filter}`).expect(200)).body.total as number;
    expect(await count(`tokenId=${tokenA}`)).toBe(3);
    expect(await count(`tokenId=${tokenA}&model=gpt-4o`)).toBe(2);
    expect(await count(`tokenId=${tokenA}&status=429`)).toBe(1);
    expect(await count(`tokenId=${tokenA}&from=2026-03-01T12:00:00Z&to=2026-03-02T00:00:00Z`)).toBe(
      1,
    );
    const page = await api.get(`/api/usage/logs?tokenId=${tokenA}&pageSize=2&page=2`).expect(200);
    expect(page.body).toMatchObject({ total: 3, items: [{ cost: 100 }] });

    const bad = await api
      .get('/api/usage/logs?tokenId=x&status=42&from=yesterday&pageSize=500')
      .expect(400);
    expect(
      [...new Set(bad.body.error.fields.map((f: { field: string }) => f.field))].sort(),
    ).toEqual(['from', 'pageSize', 'status', 'tokenId']);
    await api.get('/api/usage/logs?from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z').expect(400);
  });

  it('names the model asked for when a fallback of it served', async () => {
    const admin = h.api((await h.session('admin')).token);
    const tokenId = (
      await admin
        .post('/api/tokens', { name: 'usage-fallback', expiresAt: null, quota: null })
        .expect(201)
    ).body.id as number;
    for (const [model, requested, at] of [
      ['gpt-4o-mini', 'gpt-4o', '2026-05-01T00:00:02Z'],
      ['gpt-4o', null, '2026-05-01T00:00:01Z'],
    ] as const) {
      await query(
        h.databaseUrl,
        `INSERT INTO "UsageLog" ("requestId", "tokenId", endpoint, model, "requestedModel",
           "promptTokens", "completionTokens", cost, status, "latencyMs", "requestedAt")
         VALUES ($1, $2, 'chat.completions', $3, $4, 1, 1, 1, 200, 10, $5)`,
        [`req-${randomSuffix()}${randomSuffix()}`, tokenId, model, requested, at],
      );
    }
    const logs = await api.get(`/api/usage/logs?tokenId=${tokenId}`).expect(200);
    expect(logs.body.items).toMatchObject([
      { model: 'gpt-4o-mini', requestedModel: 'gpt-4o' },
      { model: 'gpt-4o', requestedModel: null },
    ]);
  });

  const range = 'from=2026-03-01T00:00:00Z&to=2026-03-04T00:00:00Z';
  const mine = (items: { key: string | null }[], keys: (string | null)[]) =>
    items.filter((item) => keys.includes(item.key));

  it('sums by day (UTC) and by model', async () => {
    const days = await api
      .get(`/api/usage/summary?groupBy=day&${range}&tokenId=${tokenA}`)
      .expect(200);
    expect(days.body.items).toEqual([
      {
        key: '2026-03-01',
        label: null,
        requests: 2,
        failures: 1,
        promptTokens: 20,
        completionTokens: 10,
        cost: 100,
      },
      {
        key: '2026-03-02',
        label: null,
        requests: 1,
        failures: 0,
        promptTokens: 10,
        completionTokens: 5,
        cost: 7,
      },
    ]);
    expect(days.body.totals).toEqual({
      requests: 3,
      failures: 1,
      promptTokens: 30,
      completionTokens: 15,
      cost: 107,
    });
    const models = await api
      .get(`/api/usage/summary?groupBy=model&${range}&channelId=${channel}`)
      .expect(200);
    expect(models.body.items).toEqual([
      {
        key: 'gpt-4o',
        label: null,
        requests: 3,
        failures: 1,
        promptTokens: 30,
        completionTokens: 15,
        cost: 150,
      },
      {
        key: 'gpt-4o-mini',
        label: null,
        requests: 1,
        failures: 0,
        promptTokens: 10,
        completionTokens: 5,
        cost: 7,
      },
    ]);
  });

  it('sums by token and by channel, with their names', async () => {
    const tokens = await api.get(`/api/usage/summary?groupBy=token&${range}`).expect(200);
    expect(mine(tokens.body.items, [String(tokenA), String(tokenB)])).toEqual([
      {
        key: String(tokenA),
        label: 'usage-a',
        requests: 3,
        failures: 1,
        promptTokens: 30,
        completionTokens: 15,
        cost: 107,
      },
      {
        key: String(tokenB),
        label: 'usage-b',
        requests: 2,
        failures: 1,
        promptTokens: 10,
        completionTokens: 5,
        cost: 50,
      },
    ]);
    const channels = await api
      .get(`/api/usage/summary?groupBy=channel&${range}&tokenId=${tokenB}`)
      .expect(200);
    expect(channels.body.items).toEqual([
      {
        key: String(channel),
        label: 'usage-ch',
        requests: 1,
        failures: 0,
        promptTokens: 10,
        completionTokens: 5,
        cost: 50,
      },
      {
        key: null,
        label: null,
        requests: 1,
        failures: 1,
        promptTokens: 0,
        completionTokens: 0,
        cost: 0,
      },
    ]);
  });

  it('needs a known grouping', async () => {
    const bad = await api.get('/api/usage/summary?groupBy=week').expect(400);
    expect(bad.body.error.fields).toEqual([
      { field: 'groupBy', message: 'groupBy must be one of day, model, token, channel, team' },
    ]);
    const defaults = await api.get('/api/usage/summary?groupBy=model').expect(200);
    const span = Date.parse(defaults.body.to) - Date.parse(defaults.body.from);
    expect(span).toBe(30 * 86_400_000);
  });
});
