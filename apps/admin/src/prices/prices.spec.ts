import { query } from '@switchyard/testing';
import { AdminHarness, randomSuffix, type Session } from '../testing/admin-harness.fixture.js';

describe('prices', () => {
  let h: AdminHarness;
  let admin: Session;
  let api: ReturnType<AdminHarness['api']>;

  beforeAll(async () => {
    h = await AdminHarness.start({ name: 'prices' });
    admin = await h.session('admin');
    api = h.api(admin.token);
    // This file owns the price table of the run's database.
    await query(h.databaseUrl, `DELETE FROM "ModelPrice"`);
  });

  afterAll(async () => {
    await h.close();
  });

  const models = async () =>
    ((await api.get('/api/prices?pageSize=100').expect(200)).body.items as { model: string }[]).map(
      (p) => p.model,
    );

  it('merges prices by default and publishes the change', async () => {
    const result = await api
      .put('/api/prices', {
        items: [
          {
            model: 'gpt-4o',
            inputPrice: 2_500_000,
            outputPrice: 10_000_000,
            cachedInputPrice: 1_250_000,
          },
          { model: 'gpt-4-gizmo-*', inputPrice: 30_000_000, outputPrice: 60_000_000 },
        ],
      })
      .expect(200);
    expect(result.body).toEqual({ upserted: 2, deleted: 0 });
    await h.event('price.changed', (e) => e.model === undefined);

    await api
      .put('/api/prices', {
        items: [{ model: 'gpt-4o', inputPrice: 2_000_000, outputPrice: 8_000_000 }],
      })
      .expect(200);
    await h.event('price.changed', (e) => e.model === 'gpt-4o');
    const listed = await api.get('/api/prices').expect(200);
    expect(listed.body).toEqual({
      items: [
        {
          model: 'gpt-4-gizmo-*',
          inputPrice: 30_000_000,
          outputPrice: 60_000_000,
          cachedInputPrice: null,
          updatedAt: expect.any(String),
        },
        {
          model: 'gpt-4o',
          inputPrice: 2_000_000,
          outputPrice: 8_000_000,
          // A price set without a cached-input price loses the one it had.
          cachedInputPrice: null,
          updatedAt: expect.any(String),
        },
      ],
      total: 2,
    });
  });

  it('replaces the whole table with mode=replace', async () => {
    const result = await api
      .put('/api/prices', {
        mode: 'replace',
        items: [{ model: 'o1-mini', inputPrice: 1, outputPrice: 2 }],
      })
      .expect(200);
    expect(result.body).toEqual({ upserted: 1, deleted: 2 });
    expect(await models()).toEqual(['o1-mini']);
    const audit = await h.auditOf('price', 'o1-mini');
    expect(audit.at(-1)).toMatchObject({
      action: 'price.update',
      details: { mode: 'replace', upserted: 1, deleted: 2 },
    });
  });

  it('deletes one price', async () => {
    const model = `m-${randomSuffix()}`;
    await api.put('/api/prices', { items: [{ model, inputPrice: 5, outputPrice: 6 }] }).expect(200);
    await api.delete(`/api/prices/${encodeURIComponent(model)}`).expect(204);
    await api.delete(`/api/prices/${encodeURIComponent(model)}`).expect(404);
    expect(await models()).not.toContain(model);
    await h.event('price.changed', (e) => e.model === model);
  });

  it('names each bad field, and refuses a model listed twice', async () => {
    const bad = await api
      .put('/api/prices', {
        mode: 'overwrite',
        items: [{ model: 'a b', inputPrice: -1, outputPrice: 1.5 }],
      })
      .expect(400);
    expect(bad.body.error.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'items.0.inputPrice',
      'items.0.model',
      'items.0.outputPrice',
      'mode',
    ]);
    const twice = await api
      .put('/api/prices', {
        items: [
          { model: 'x', inputPrice: 1, outputPrice: 1 },
          { model: 'x', inputPrice: 2, outputPrice: 2 },
        ],
      })
      .expect(400);
    expect(twice.body.error.fields[0].field).toBe('items');
  });

  it('prices a *suffix entry, and refuses a lone *', async () => {
    await api
      .put('/api/prices', { items: [{ model: '*-all', inputPrice: 1_000, outputPrice: 2_000 }] })
      .expect(200);
    expect(await models()).toContain('*-all');
    const lone = await api
      .put('/api/prices', { items: [{ model: '*', inputPrice: 1, outputPrice: 1 }] })
      .expect(400);
    expect(lone.body.error.fields.map((f: { field: string }) => f.field)).toEqual([
      'items.0.model',
    ]);
  });
});

describe('prices: models used without a price', () => {
  let h: AdminHarness;
  let api: ReturnType<AdminHarness['api']>;
  let viewer: ReturnType<AdminHarness['api']>;

  beforeAll(async () => {
    h = await AdminHarness.start({ name: 'unpriced' });
    api = h.api((await h.session('admin')).token);
    viewer = h.api((await h.session('viewer')).token);
  });

  afterAll(async () => {
    await h.close();
  });

  /** A day of usage as metering's roll-up writes it; `daysAgo` 0 is today (UTC). */
  const used = (model: string, daysAgo: number, requests: number, failures = 0, cost = 0) =>
    query(
      h.databaseUrl,
      `INSERT INTO "UsageDaily" (day, "tokenId", "channelId", model, requests, failures,
                                 "promptTokens", "completionTokens", cost)
       VALUES ((now() AT TIME ZONE 'UTC')::date - $2::int, 0, 0, $1, $3, $4, 0, 0, $5)`,
      [model, daysAgo, requests, failures, cost],
    );

  it('lists the models used in the period that no price matches, most used first', async () => {
    const tag = randomSuffix();
    const name = (model: string) => `${model}-${tag}`;
    await api
      .put('/api/prices', {
        items: [
          { model: name('priced'), inputPrice: 1, outputPrice: 1 },
          { model: `${name('family')}*`, inputPrice: 1, outputPrice: 1 },
          { model: `*-all-${tag}`, inputPrice: 1, outputPrice: 1 },
        ],
      })
      .expect(200);
    await used(name('priced'), 0, 5);
    await used(`gpt-4-all-${tag}`, 0, 6);
    await used(`${name('family')}-mini`, 1, 5);
    await used(name('popular'), 0, 7, 1, 4_200);
    await used(name('popular'), 3, 2, 0, 1_000);
    await used(name('rare'), 2, 1);
    await used(name('refused-only'), 0, 3, 3);
    await used(name('long-ago'), 40, 9);

    const mine = (body: { items: { model: string }[] }) =>
      body.items.filter((item) => item.model.endsWith(tag));
    const { body } = await viewer.get('/api/prices/unpriced?pageSize=100').expect(200);
    expect(mine(body)).toEqual([
      { model: name('popular'), requests: 8, cost: 5_200, lastUsedOn: expect.any(String) },
      { model: name('rare'), requests: 1, cost: 0, lastUsedOn: expect.any(String) },
    ]);
    const today = new Date().toISOString().slice(0, 10);
    expect(mine(body)[0]).toMatchObject({ lastUsedOn: today });

    const wider = await api.get('/api/prices/unpriced?days=60&pageSize=100').expect(200);
    expect(mine(wider.body).map((item: { model: string }) => item.model)).toContain(
      name('long-ago'),
    );
    const narrow = await api.get('/api/prices/unpriced?days=1&pageSize=100').expect(200);
    expect(mine(narrow.body).map((item: { model: string }) => item.model)).toEqual([
      name('popular'),
    ]);

    // Pricing a model takes it off the list.
    await api
      .put('/api/prices', { items: [{ model: name('popular'), inputPrice: 1, outputPrice: 1 }] })
      .expect(200);
    const after = await api.get('/api/prices/unpriced?pageSize=100').expect(200);
    expect(mine(after.body).map((item: { model: string }) => item.model)).toEqual([name('rare')]);
  });

  it('names a bad period', async () => {
    const bad = await api.get('/api/prices/unpriced?days=0').expect(400);
    expect(bad.body.error.fields[0].field).toBe('days');
    await h.api('').get('/api/prices/unpriced').expect(401);
  });
});
