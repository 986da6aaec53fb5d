import { ROUTING_SNAPSHOT_KEY, type RoutingSnapshot } from '@switchyard/contracts';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { query } from '@switchyard/testing';
import { AdminHarness, channelBody, randomSuffix } from '../testing/admin-harness.fixture.js';
import { MAX_SERIES_LINES } from './overview.service.js';

// The overview's time series over UsageLog rows inserted directly (the metering worker
// writes them), and channel health from the database plus the router's stored snapshot.

interface SeriesLine {
  key: string | null;
  label: string;
  requests: number[];
  failures: number[];
  promptTokens: number[];
  cost: number[];
}

describe('overview', () => {
  let h: AdminHarness;
  let api: ReturnType<AdminHarness['api']>;
  let editor: ReturnType<AdminHarness['api']>;
  // A day no other spec writes usage on: the series ends in its 12:00 hour.
  const day = `2024-0${1 + Math.floor(Math.random() * 9)}-1${Math.floor(Math.random() * 9)}`;
  const model = (name: string) => `ov-${randomSuffix()}-${name}`;

  const insert = (row: {
    tokenId: number;
    model: string;
    status: number;
    cost: number;
    at: string;
  }) =>
    query(
      h.databaseUrl,
      `INSERT INTO "UsageLog" ("requestId", "tokenId", endpoint, model, "promptTokens",
         "completionTokens", cost, status, "latencyMs", "requestedAt")
       VALUES ($1, $2, 'chat.completions', $3, 10, 5, $4, $5, 100, $6)`,
      [
        `req-${randomSuffix()}${randomSuffix()}`,
        row.tokenId,
        row.model,
        row.cost,
        row.status,
        row.at,
      ],
    );

  beforeAll(async () => {
    h = await AdminHarness.start({ name: 'overview' });
    api = h.api((await h.session('viewer')).token);
    editor = h.api((await h.session('admin')).token);
  });

  afterAll(() => h?.close());

  it('puts requests, failures and cost of the last 24 hours into hourly buckets per model', async () => {
    const token = (
      await editor
        .post('/api/tokens', { name: 'ov-token', expiresAt: null, quota: null })
        .expect(201)
    ).body.id as number;
    const big = model('big');
    const small = model('small');
    await insert({ tokenId: token, model: big, status: 200, cost: 500, at: `${day}T12:10:00Z` });
    await insert({ tokenId: token, model: big, status: 502, cost: 0, at: `${day}T12:50:00Z` });
    await insert({ tokenId: token, model: small, status: 200, cost: 7, at: `${day}T01:00:00Z` });
    // Outside the range: the hour after `to`, and more than 24 hours before.
    await insert({ tokenId: token, model: big, status: 200, cost: 1, at: `${day}T13:00:00Z` });
    await insert({
      tokenId: token,
      model: big,
      status: 200,
      cost: 1,
      at: `${previousDay(day)}T12:59:59Z`,
    });

    const response = await api
      .get('/api/overview/series')
      .query({ range: '24h', splitBy: 'model', to: `${day}T12:30:00Z` })
      .expect(200);
    const body = response.body as { bucketSeconds: number; buckets: string[]; lines: SeriesLine[] };
    expect(body.bucketSeconds).toBe(3600);
    expect(body.buckets).toHaveLength(24);
    expect(body.buckets[0]).toBe(`${day}T13:00:00.000Z`.replace(day, previousDay(day)));
    expect(body.buckets[23]).toBe(`${day}T12:00:00.000Z`);
    const mine = body.lines.filter((line) => line.key === big || line.key === small);
    expect(mine.map((line) => line.key)).toEqual([big, small]);
    const [bigLine, smallLine] = mine;
    expect(bigLine!.requests[23]).toBe(2);
    expect(bigLine!.failures[23]).toBe(1);
    expect(bigLine!.cost[23]).toBe(500);
    expect(bigLine!.requests.reduce((a, b) => a + b)).toBe(2);
    expect(smallLine!.requests[12]).toBe(1);
    expect(smallLine!.promptTokens[12]).toBe(10);

    const byToken = await api
      .get('/api/overview/series')
      .query({ range: '24h', splitBy: 'token', to: `${day}T12:30:00Z` })
      .expect(200);
    const tokenLine = (byToken.body.lines as SeriesLine[]).find((l) => l.key === String(token));
    expect(tokenLine?.label).toBe('ov-token');
    expect(tokenLine?.requests.reduce((a, b) => a + b)).toBe(3);
  });

  it(`draws at most ${MAX_SERIES_LINES} lines, the rest summed as "Other"`, async () => {
    const token = (
      await editor
        .post('/api/tokens', { name: 'ov-many', expiresAt: null, quota: null })
        .expect(201)
    ).body.id as number;
    const at = '2023-05-05T05:05:00Z';
    for (let i = 0; i < MAX_SERIES_LINES + 2; i += 1)
      await insert({ tokenId: token, model: model(`m${i}`), status: 200, cost: 100 + i, at });
    const response = await api
      .get('/api/overview/series')
      .query({ range: '30d', splitBy: 'model', to: at })
      .expect(200);
    const lines = response.body.lines as SeriesLine[];
    expect(lines).toHaveLength(MAX_SERIES_LINES);
    expect(lines.at(-1)).toMatchObject({ key: null, label: 'Other' });
    const sum = (line: SeriesLine) => line.requests.reduce((a, b) => a + b);
    expect(lines.map(sum).reduce((a, b) => a + b)).toBe(MAX_SERIES_LINES + 2);
    expect(sum(lines.at(-1)!)).toBe(3);
    expect(response.body.bucketSeconds).toBe(86_400);
  });

  it('names a bad range or split, and refuses anyone not signed in', async () => {
    const bad = await api.get('/api/overview/series').query({ range: '1y', splitBy: 'key' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'range',
      'splitBy',
    ]);
    await h.api().get('/api/overview/health').expect(401);
  });

  it("shows each channel's state: routing, cooling down, breaker open, disabled with its reason", async () => {
    const create = async (keys: number) =>
      (
        await editor
          .post(
            '/api/channels',
            channelBody({
              kind: keys > 1 ? 'aggregated' : 'single',
              keys: Array.from({ length: keys }, () => `ov-key-${randomSuffix()}${randomSuffix()}`),
            }),
          )
          .expect(201)
      ).body as { id: number; keys: { id: number }[] };
    const routing = await create(2);
    const cooling = await create(1);
    const broken = await create(1);
    const disabled = await create(1);
    await editor
      .post(`/api/channels/${disabled.id}/disable`, { reason: 'maintenance window' })
      .expect(200);
    const now = Date.now();
    const snapshot: RoutingSnapshot = {
      version: 41,
      generatedAt: now,
      channels: [routing, cooling].map((channel) => ({
        id: channel.id,
        name: 'n',
        kind: 'single',
        provider: 'openai',
        settings: {},
        baseUrl: 'https://upstream.example.com',
        models: ['gpt-4o'],
        modelMapping: {},
        priority: 1,
        weight: 1,
        groups: ['default'],
        keys: channel.keys.map((key, index) => ({
          id: key.id,
          secretCiphertext: 'sealed',
          rpm: null,
          tpm: null,
          concurrency: null,
          // The routing channel has one of its two keys cooling; the other channel all.
          coolingUntil: channel === cooling || index === 1 ? now + 60_000 : null,
        })),
      })),
    };
    await h.app.get<RedisClient>(REDIS).set(ROUTING_SNAPSHOT_KEY, JSON.stringify(snapshot));

    const response = await api.get('/api/overview/health').expect(200);
    expect(response.body.snapshotVersion).toBe(41);
    const state = (id: number) =>
      (
        response.body.channels as {
          id: number;
          state: string;
          statusReason: string | null;
          keys: { coolingUntil: string | null }[];
        }[]
      ).find((channel) => channel.id === id);
    expect(state(routing.id)?.state).toBe('routing');
    expect(state(routing.id)?.keys.map((key) => key.coolingUntil !== null)).toEqual([false, true]);
    expect(state(cooling.id)?.state).toBe('cooling_down');
    expect(new Date(state(cooling.id)!.keys[0]!.coolingUntil!).getTime()).toBe(now + 60_000);
    expect(state(broken.id)?.state).toBe('breaker_open');
    expect(state(disabled.id)).toMatchObject({
      state: 'disabled',
      statusReason: 'maintenance window',
    });
  });
});

function previousDay(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
}
