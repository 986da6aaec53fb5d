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
});
