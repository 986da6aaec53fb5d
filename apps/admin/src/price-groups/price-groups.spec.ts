import { AdminHarness, randomSuffix, type Session } from '../testing/admin-harness.fixture.js';
import { multiplierPpm, ratioText } from './price-groups.dto.js';

// Price groups (docs/teams.md, "Price groups"): a multiplier typed as a decimal ratio and
// kept exactly in parts per million; `default` always there.

describe('price group multipliers', () => {
  it('converts a decimal ratio to parts per million exactly, and back', () => {
    expect(multiplierPpm('0.8')).toBe(800_000);
    expect(multiplierPpm(0.8)).toBe(800_000);
    expect(multiplierPpm(1.1)).toBe(1_100_000);
    expect(multiplierPpm('1.000001')).toBe(1_000_001);
    expect(multiplierPpm(0)).toBe(0);
    expect(multiplierPpm('1000')).toBe(1_000_000_000);
    for (const bad of ['1.0000001', '-1', '1000.1', '1e3', 'abc', '', null, true, Number.NaN]) {
      expect([bad, multiplierPpm(bad)]).toEqual([bad, null]);
    }
    expect(ratioText(800_000)).toBe('0.8');
    expect(ratioText(1_000_000)).toBe('1');
    expect(ratioText(1_000_001)).toBe('1.000001');
  });
});

describe('price groups', () => {
  let h: AdminHarness;
  let admin: Session;
  let api: ReturnType<AdminHarness['api']>;

  beforeAll(async () => {
    h = await AdminHarness.start({ name: 'pricegroups' });
    admin = await h.session('admin');
    api = h.api(admin.token);
  });

  afterAll(async () => {
    await h.close();
  });

  it('creates, changes, lists and deletes groups; default always exists and stays', async () => {
    const name = `vip-${randomSuffix()}`;
    const created = await api.put(`/api/price-groups/${name}`, { multiplier: '0.8' }).expect(200);
    expect(created.body).toMatchObject({ name, multiplier: '0.8', multiplierPpm: 800_000 });
    await h.event('price-group.changed', (e) => e.name === name);
    const changed = await api.put(`/api/price-groups/${name}`, { multiplier: 1.25 }).expect(200);
    expect(changed.body).toMatchObject({ multiplier: '1.25', multiplierPpm: 1_250_000 });

    const listed = await api.get('/api/price-groups').expect(200);
    expect(listed.body.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'default', multiplierPpm: 1_000_000 }),
        expect.objectContaining({ name, multiplierPpm: 1_250_000 }),
      ]),
    );

    const team = await api
      .post('/api/teams', { name: `pg-${randomSuffix()}`, priceGroup: name })
      .expect(201);
    const inUse = await api.delete(`/api/price-groups/${name}`).expect(409);
    expect(inUse.body.error.message).toContain('1 team(s)');
    await api.patch(`/api/teams/${team.body.id}`, { priceGroup: 'default' }).expect(200);
    await api.delete(`/api/price-groups/${name}`).expect(204);
    await api.delete(`/api/price-groups/${name}`).expect(404);
    const kept = await api.delete('/api/price-groups/default').expect(409);
    expect(kept.body.error.code).toBe('conflict');
    expect((await h.auditOf('price_group', name)).map((a) => a.action)).toEqual([
      'price_group.create',
      'price_group.update',
      'price_group.delete',
    ]);
  });

  it('names a bad multiplier or name', async () => {
    const bad = await api.put('/api/price-groups/x', { multiplier: '0.1234567' }).expect(400);
    expect(bad.body.error.fields).toEqual([
      { field: 'multiplier', message: expect.stringContaining('at most 6 decimals') },
    ]);
    const negative = await api.put('/api/price-groups/x', { multiplier: -1 }).expect(400);
    expect(negative.body.error.fields[0].field).toBe('multiplier');
    const name = await api.put('/api/price-groups/bad%20name', { multiplier: 1 }).expect(400);
    expect(name.body.error.fields[0].field).toBe('name');
  });
});
