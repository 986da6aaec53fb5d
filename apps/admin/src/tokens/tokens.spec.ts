import { sha256Hex } from '@switchyard/security';
import { query } from '@switchyard/testing';
import { AdminHarness, randomSuffix, type Session } from '../testing/admin-harness.fixture.js';

// Gateway tokens through the HTTP API: the value shown once, the hash stored, the events
// the edges act on.

interface TokenView {
  id: number;
  key?: string;
  version: number;
  status: string;
  [field: string]: unknown;
}

const inOneDay = () => new Date(Date.now() + 86_400_000).toISOString();

describe('tokens', () => {
  let h: AdminHarness;
  let admin: Session;
  let api: ReturnType<AdminHarness['api']>;

  beforeAll(async () => {
    h = await AdminHarness.start({ name: 'tokens' });
    admin = await h.session('admin');
    api = h.api(admin.token);
  });

  afterAll(async () => {
    await h.close();
  });

  const create = async (overrides: Record<string, unknown> = {}): Promise<TokenView> =>
    (
      await api
        .post('/api/tokens', {
          name: `token-${randomSuffix()}`,
          expiresAt: null,
          quota: null,
          ...overrides,
        })
        .expect(201)
    ).body as TokenView;

  it('shows the full value once, and stores only its SHA-256 and last four characters', async () => {
    const expiresAt = inOneDay();
    const created = await create({
      name: 'chat app',
      expiresAt,
      quota: 5_000_000,
      models: ['gpt-4o', 'gpt-4-gizmo-*'],
      allowIps: ['203.0.113.7', '10.0.0.0/8', '2001:db8::/32'],
      group: 'vip',
      rateLimit: 60,
    });
    const key = created.key!;
    expect(key).toMatch(/^sk-[A-Za-z0-9]{48}$/);
    expect(created).toEqual({
      id: expect.any(Number),
      name: 'chat app',
      key,
      lastFour: key.slice(-4),
      status: 'enabled',
      expiresAt: new Date(expiresAt).toISOString(),
      quota: 5_000_000,
      usedQuota: 0,
      remainingQuota: 5_000_000,
      models: ['gpt-4o', 'gpt-4-gizmo-*'],
      allowIps: ['203.0.113.7', '10.0.0.0/8', '2001:db8::/32'],
      group: 'vip',
      rateLimit: 60,
      teamId: null,
      ownerId: null,
      version: 1,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });

    const rows = await query<{ row: string; keyHash: string }>(
      h.databaseUrl,
      `SELECT t::text AS row, "keyHash" FROM "Token" t WHERE id = $1`,
      [created.id],
    );
    expect(rows[0]?.keyHash).toBe(sha256Hex(key));
    expect(rows[0]?.row).not.toContain(key);

    const read = await api.get(`/api/tokens/${created.id}`).expect(200);
    expect(read.body.key).toBeUndefined();
    expect(read.text).not.toContain(key);
    const listed = await api.get('/api/tokens?name=chat%20app').expect(200);
    expect(listed.text).not.toContain(key);
    expect(listed.body.items.map((t: TokenView) => t.id)).toContain(created.id);

    await h.event(
      'token.changed',
      (e) => e.tokenId === created.id && e.keyHash === sha256Hex(key) && e.action === 'created',
    );
    const audit = await h.auditOf('token', created.id);
    expect(audit).toEqual([expect.objectContaining({ action: 'token.create', actorId: admin.id })]);
    expect(JSON.stringify(audit)).not.toContain(key);
  });

  it('needs an explicit expiry and quota (null for never and unlimited), and checks each field', async () => {
    const missing = await api.post('/api/tokens', { name: 'x' }).expect(400);
    expect(missing.body.error.fields).toEqual([
      {
        field: 'expiresAt',
        message: 'expiresAt is required: an ISO 8601 date and time, or null for never',
      },
      {
        field: 'quota',
        message:
          'quota is required: a whole number of micro-dollars (0 or more), or null for unlimited',
      },
    ]);
    const bad = await api
      .post('/api/tokens', {
        name: '',
        expiresAt: 'tomorrow',
        quota: -1,
        models: ['gpt 4'],
        allowIps: ['10.0.0.0/33', 'example.com'],
        group: 'no spaces',
        rateLimit: 0,
      })
      .expect(400);
    expect(
      [...new Set(bad.body.error.fields.map((f: { field: string }) => f.field))].sort(),
    ).toEqual(['allowIps', 'expiresAt', 'group', 'models', 'name', 'quota', 'rateLimit']);
    const past = await api
      .post('/api/tokens', { name: 'x', expiresAt: '2020-01-01T00:00:00Z', quota: null })
      .expect(400);
    expect(past.body.error.fields[0].field).toBe('expiresAt');

    const unlimited = await create();
    expect(unlimited).toMatchObject({
      expiresAt: null,
      quota: null,
      remainingQuota: null,
      models: [],
      allowIps: [],
      group: 'default',
      rateLimit: null,
    });
  });

  it('updates, disables and enables with optimistic versioning, each change published', async () => {
    const token = await create({ quota: 1000 });
    const keyHash = sha256Hex(token.key!);
    const renamed = await api
      .patch(`/api/tokens/${token.id}`, { version: 1, name: 'renamed', rateLimit: 5 })
      .expect(200);
    expect(renamed.body).toMatchObject({ name: 'renamed', rateLimit: 5, version: 2 });
    expect(renamed.body.key).toBeUndefined();

    const disabled = await api
      .patch(`/api/tokens/${token.id}`, { version: 2, enabled: false })
      .expect(200);
    expect(disabled.body).toMatchObject({ status: 'disabled', version: 3 });
    const stillDisabled = await api
      .patch(`/api/tokens/${token.id}`, { version: 3, quota: 2000 })
      .expect(200);
    expect(stillDisabled.body.status).toBe('disabled');
    const enabled = await api
      .patch(`/api/tokens/${token.id}`, { version: 4, enabled: true })
      .expect(200);
    expect(enabled.body).toMatchObject({ status: 'enabled', version: 5 });

    const stale = await api
      .patch(`/api/tokens/${token.id}`, { version: 2, enabled: false })
      .expect(409);
    expect(stale.body.error.code).toBe('version_conflict');
    expect((await api.get(`/api/tokens/${token.id}`)).body.status).toBe('enabled');

    await h.event('token.changed', (e) => e.tokenId === token.id && e.action === 'created');
    const updates = h
      .eventsNamed('token.changed')
      .filter((e) => e.tokenId === token.id && e.action === 'updated');
    expect(updates).toHaveLength(4);
    expect(updates.every((e) => e.keyHash === keyHash)).toBe(true);

    const audit = await h.auditOf('token', token.id);
    expect(audit.map((a) => a.action)).toEqual([
      'token.create',
      'token.update',
      'token.update',
      'token.update',
      'token.update',
    ]);
    expect(audit[2]?.details).toEqual({ status: { from: 'enabled', to: 'disabled' } });
  });

  it('moves a token in and out of exhausted with its quota, and shows expired tokens', async () => {
    const token = await create({ quota: 1000 });
    await query(h.databaseUrl, `UPDATE "Token" SET "usedQuota" = 800 WHERE id = $1`, [token.id]);
    const lowered = await api
      .patch(`/api/tokens/${token.id}`, { version: 1, quota: 500 })
      .expect(200);
    expect(lowered.body).toMatchObject({ status: 'exhausted', usedQuota: 800, remainingQuota: 0 });
    const raised = await api
      .patch(`/api/tokens/${token.id}`, { version: 2, quota: 3000 })
      .expect(200);
    expect(raised.body).toMatchObject({ status: 'enabled', remainingQuota: 2200 });
    const unlimited = await api
      .patch(`/api/tokens/${token.id}`, { version: 3, quota: null })
      .expect(200);
    expect(unlimited.body).toMatchObject({ quota: null, remainingQuota: null });

    const group = `exp-${randomSuffix()}`;
    const expiring = await create({ group, expiresAt: inOneDay() });
    const live = await create({ group });
    await query(
      h.databaseUrl,
      `UPDATE "Token" SET "expiresAt" = now() - interval '1 minute' WHERE id = $1`,
      [expiring.id],
    );
    const expired = await api.get(`/api/tokens?group=${group}&status=expired`).expect(200);
    expect(expired.body).toMatchObject({
      total: 1,
      items: [{ id: expiring.id, status: 'expired' }],
    });
    const enabled = await api.get(`/api/tokens?group=${group}&status=enabled`).expect(200);
    expect(enabled.body).toMatchObject({ total: 1, items: [{ id: live.id, status: 'enabled' }] });
  });

  it('deletes a token and tells the edges which hash to forget', async () => {
    const token = await create();
    await api.delete(`/api/tokens/${token.id}`).expect(204);
    await api.get(`/api/tokens/${token.id}`).expect(404);
    await api.patch(`/api/tokens/${token.id}`, { version: 1, enabled: false }).expect(404);
    await api.delete(`/api/tokens/${token.id}`).expect(404);
    await h.event(
      'token.changed',
      (e) =>
        e.tokenId === token.id && e.keyHash === sha256Hex(token.key!) && e.action === 'deleted',
    );
    expect((await h.auditOf('token', token.id)).map((a) => a.action)).toEqual([
      'token.create',
      'token.delete',
    ]);
  });

  it('puts a token in a team on creation or edit, audited and published, and refuses an unknown team', async () => {
    const team = (await api.post('/api/teams', { name: `team-${randomSuffix()}` }).expect(201))
      .body as { id: number };
    const other = (await api.post('/api/teams', { name: `team-${randomSuffix()}` }).expect(201))
      .body as { id: number };

    const inTeam = await create({ teamId: team.id });
    expect(inTeam).toMatchObject({ teamId: team.id, ownerId: null });
    expect((await h.auditOf('token', inTeam.id))[0]?.details).toMatchObject({ teamId: team.id });
    const bundle = await api
      .post('/api/tokens/bundle', {
        name: `b-${randomSuffix()}`,
        expiresAt: null,
        quota: null,
        teamId: team.id,
      })
      .expect(201);
    expect(bundle.body.chat.teamId).toBe(team.id);

    // Its own budget moves with it: listed, and deleted, with the team it is in.
    await api
      .put('/api/budgets', { level: 'token', tokenId: inTeam.id, amount: 1000, period: 'none' })
      .expect(200);
    const moved = await api
      .patch(`/api/tokens/${inTeam.id}`, { version: 1, teamId: other.id })
      .expect(200);
    expect(moved.body).toMatchObject({ teamId: other.id, version: 2 });
    const budgets = await api.get(`/api/budgets?teamId=${other.id}&level=token`).expect(200);
    expect(budgets.body.items.map((b: { tokenId: number }) => b.tokenId)).toEqual([inTeam.id]);
    await h.event(
      'token.changed',
      (e) =>
        e.tokenId === inTeam.id && e.keyHash === sha256Hex(inTeam.key!) && e.action === 'updated',
    );
    const out = await api
      .patch(`/api/tokens/${inTeam.id}`, { version: 2, teamId: null })
      .expect(200);
    expect(out.body.teamId).toBeNull();
    const audit = await h.auditOf('token', inTeam.id);
    expect(audit.slice(1).map((a) => a.details)).toEqual([
      { teamId: { from: team.id, to: other.id } },
      { teamId: { from: other.id, to: null } },
    ]);

    const unknown = await api
      .post('/api/tokens', { name: 'x', expiresAt: null, quota: null, teamId: 2_000_000_000 })
      .expect(400);
    expect(unknown.body.error.fields).toEqual([
      { field: 'teamId', message: 'teamId 2000000000 is not a team' },
    ]);
    const edit = await api
      .patch(`/api/tokens/${inTeam.id}`, { version: 3, teamId: 2_000_000_000 })
      .expect(400);
    expect(edit.body.error.fields[0].field).toBe('teamId');
    const notAnId = await api
      .post('/api/tokens', { name: 'x', expiresAt: null, quota: null, teamId: 'a' })
      .expect(400);
    expect(notAnId.body.error.fields[0].field).toBe('teamId');
    // A member's token stays in the team whose policy it was made under.
    const members = await create({ teamId: team.id });
    await query(h.databaseUrl, `UPDATE "Token" SET "ownerId" = $1 WHERE id = $2`, [
      admin.id,
      members.id,
    ]);
    const owned = await api
      .patch(`/api/tokens/${members.id}`, { version: 1, teamId: other.id })
      .expect(400);
    expect(owned.body.error.fields[0].field).toBe('teamId');
    expect((await api.get(`/api/tokens/${inTeam.id}`)).body).toMatchObject({
      teamId: null,
      version: 3,
    });
  });

  it('creates the three tokens of a chat installation in one call', async () => {
    const name = `team-${randomSuffix()}`;
    const expiresAt = inOneDay();
    const bundle = await api
      .post('/api/tokens/bundle', { name, expiresAt, quota: 10_000_000, group: 'vip' })
      .expect(201);
    const tokens = [
      bundle.body.chat,
      bundle.body.imageModel,
      bundle.body.imageService,
    ] as TokenView[];
    expect(tokens.map((t) => t.name)).toEqual([
      `${name}-chat`,
      `${name}-image-model`,
      `${name}-image-service`,
    ]);
    for (const token of tokens) {
      expect(token).toMatchObject({
        key: expect.stringMatching(/^sk-/),
        quota: 10_000_000,
        group: 'vip',
        expiresAt: new Date(expiresAt).toISOString(),
        status: 'enabled',
      });
      await h.event('token.changed', (e) => e.tokenId === token.id && e.action === 'created');
    }
    expect(new Set(tokens.map((t) => t.key)).size).toBe(3);
    const listed = await api.get(`/api/tokens?name=${name}`).expect(200);
    expect(listed.body.total).toBe(3);

    const tooLong = await api
      .post('/api/tokens/bundle', { name: 'n'.repeat(120), expiresAt: null, quota: null })
      .expect(400);
    expect(tooLong.body.error.fields[0].field).toBe('name');
  });
});
