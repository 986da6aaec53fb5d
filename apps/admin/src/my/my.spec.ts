import { sha256Hex } from '@switchyard/security';
import { query } from '@switchyard/testing';
import { AdminHarness, randomSuffix, type Session } from '../testing/admin-harness.fixture.js';

// A member's own view (docs/teams.md, "Members"): only their teams, only their tokens,
// tokens within the team's policy, redemption codes for their balance teams, and nothing
// of another team whatever id they send.

const DAY = 86_400_000;

interface TeamView {
  id: number;
  name: string;
}

describe('member self-service', () => {
  let h: AdminHarness;
  let admin: Session;
  let memberA: Session;
  let memberA2: Session;
  let memberB: Session;
  let teamA: TeamView;
  let teamB: TeamView;
  let budgetTeam: TeamView;
  let tokenB: number;
  let api: ReturnType<AdminHarness['api']>;

  let addresses = 0;
  /** A client address of its own, so each test's failed tries count alone. */
  const ip = () => `203.0.113.${(addresses += 1)}`;

  beforeAll(async () => {
    h = await AdminHarness.start({
      name: 'my',
      env: { REDEEM_MAX_FAILURES_PER_MEMBER: '5', REDEEM_MAX_FAILURES_PER_IP: '8' },
    });
    admin = await h.session('admin');
    [memberA, memberA2, memberB] = [
      await h.session('member'),
      await h.session('member'),
      await h.session('member'),
    ];
    api = h.api(admin.token);
    const team = async (body: Record<string, unknown>) =>
      (await api.post('/api/teams', { name: `team-${randomSuffix()}`, ...body }).expect(201))
        .body as TeamView;
    teamA = await team({
      models: ['gpt-4o', 'claude-*'],
      rateLimit: 60,
      maxTokenDays: 7,
      billing: 'balance',
    });
    teamB = await team({ billing: 'balance' });
    budgetTeam = await team({ billing: 'budget' });
    for (const [t, m] of [
      [teamA, memberA],
      [teamA, memberA2],
      [teamB, memberB],
      [budgetTeam, memberA],
    ] as const) {
      await api.post(`/api/teams/${t.id}/members`, { userId: m.id }).expect(201);
    }
    tokenB = (
      await h
        .api(memberB.token)
        .post(`/api/my/teams/${teamB.id}/tokens`, { name: 'b-token' })
        .expect(201)
    ).body.id as number;
  });

  afterAll(async () => {
    await h.close();
  });

  it('lists only the teams a member belongs to, with the budgets that cover them', async () => {
    await api
      .put('/api/budgets', { level: 'team', teamId: teamA.id, amount: 5_000_000, period: 'month' })
      .expect(200);
    await api
      .put('/api/budgets', {
        level: 'member',
        teamId: teamA.id,
        userId: memberA.id,
        amount: 1_000_000,
        period: 'day',
      })
      .expect(200);
    await api
      .put('/api/budgets', {
        level: 'member',
        teamId: teamA.id,
        userId: memberA2.id,
        amount: 2_000_000,
        period: 'day',
      })
      .expect(200);
    const mine = await h.api(memberA.token).get('/api/my/teams').expect(200);
    expect(mine.body.items.map((t: TeamView) => t.id).sort()).toEqual(
      [teamA.id, budgetTeam.id].sort(),
    );
    const detail = await h.api(memberA.token).get(`/api/my/teams/${teamA.id}`).expect(200);
    expect(detail.body).toMatchObject({ id: teamA.id, models: ['gpt-4o', 'claude-*'] });
    // The team's budget and their own; not another member's.
    expect(detail.body.budgets.map((b: { subject: string }) => b.subject).sort()).toEqual(
      [`member:${teamA.id}:${memberA.id}`, `team:${teamA.id}`].sort(),
    );
    expect(detail.body.budgets[0]).toEqual(
      expect.objectContaining({ spent: 0, resetsAt: expect.any(String), percent: 0 }),
    );
  });

  it("makes a token within the team's policy, taking the team's values for what is left out", async () => {
    const before = Date.now();
    const created = await h
      .api(memberA.token)
      .post(`/api/my/teams/${teamA.id}/tokens`, { name: 'laptop' })
      .expect(201);
    const key = created.body.key as string;
    expect(created.body).toMatchObject({
      name: 'laptop',
      models: ['gpt-4o', 'claude-*'],
      rateLimit: 60,
      teamId: teamA.id,
      ownerId: memberA.id,
      quota: null,
    });
    const expires = new Date(created.body.expiresAt as string).getTime();
    expect(expires).toBeGreaterThanOrEqual(before + 7 * DAY);
    expect(expires).toBeLessThanOrEqual(Date.now() + 7 * DAY);
    const [row] = await query<{ keyHash: string; teamId: number; ownerId: number }>(
      h.databaseUrl,
      `SELECT "keyHash", "teamId", "ownerId" FROM "Token" WHERE id = $1`,
      [created.body.id],
    );
    expect(row).toEqual({ keyHash: sha256Hex(key), teamId: teamA.id, ownerId: memberA.id });
    await h.event('token.changed', (e) => e.tokenId === created.body.id && e.action === 'created');

    const narrower = await h
      .api(memberA.token)
      .post(`/api/my/teams/${teamA.id}/tokens`, {
        name: 'narrow',
        models: ['claude-3-opus', 'claude-3*'],
        rateLimit: 10,
        expiresAt: new Date(Date.now() + DAY).toISOString(),
      })
      .expect(201);
    expect(narrower.body).toMatchObject({ models: ['claude-3-opus', 'claude-3*'], rateLimit: 10 });
  });

  it('refuses a token beyond the team, naming the field (403)', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ models: ['gpt-4o-mini'] }, 'models'],
      [{ models: ['gpt-4o', 'cl*'] }, 'models'],
      [{ models: [] }, 'models'],
      [{ rateLimit: 61 }, 'rateLimit'],
      [{ rateLimit: null }, 'rateLimit'],
      [{ expiresAt: new Date(Date.now() + 8 * DAY).toISOString() }, 'expiresAt'],
      [{ expiresAt: null }, 'expiresAt'],
    ];
    for (const [body, field] of cases) {
      const response = await h
        .api(memberA.token)
        .post(`/api/my/teams/${teamA.id}/tokens`, { name: 'too-much', ...body });
      expect([JSON.stringify(body), response.status, response.body.error?.code]).toEqual([
        JSON.stringify(body),
        403,
        'forbidden',
      ]);
      expect(response.body.error.fields).toEqual([{ field, message: expect.any(String) }]);
    }
    const bad = await h
      .api(memberA.token)
      .post(`/api/my/teams/${teamA.id}/tokens`, { name: '', models: ['*'], rateLimit: 0 })
      .expect(400);
    expect(
      [...new Set(bad.body.error.fields.map((f: { field: string }) => f.field))].sort(),
    ).toEqual(['models', 'name', 'rateLimit']);
    const past = await h
      .api(memberA.token)
      .post(`/api/my/teams/${teamA.id}/tokens`, { name: 'old', expiresAt: '2020-01-01T00:00:00Z' })
      .expect(400);
    expect(past.body.error.fields[0].field).toBe('expiresAt');
  });

  it("lists and revokes only the member's own tokens", async () => {
    const own = await h
      .api(memberA.token)
      .post(`/api/my/teams/${teamA.id}/tokens`, { name: 'mine' })
      .expect(201);
    const colleague = await h
      .api(memberA2.token)
      .post(`/api/my/teams/${teamA.id}/tokens`, { name: 'theirs' })
      .expect(201);
    const listed = await h.api(memberA.token).get(`/api/my/teams/${teamA.id}/tokens`).expect(200);
    const ids = listed.body.items.map((t: { id: number }) => t.id);
    expect(ids).toContain(own.body.id);
    expect(ids).not.toContain(colleague.body.id);
    expect(listed.text).not.toContain(own.body.key);

    await h
      .api(memberA.token)
      .delete(`/api/my/teams/${teamA.id}/tokens/${colleague.body.id}`)
      .expect(404);
    await api
      .put('/api/budgets', { level: 'token', tokenId: own.body.id, amount: 1, period: 'day' })
      .expect(200);
    await h
      .api(memberA.token)
      .delete(`/api/my/teams/${teamA.id}/tokens/${own.body.id}`)
      .expect(204);
    await h.event('token.changed', (e) => e.tokenId === own.body.id && e.action === 'deleted');
    const [left] = await query<{ n: number }>(
      h.databaseUrl,
      `SELECT count(*)::int AS n FROM "Budget" WHERE subject = $1`,
      [`token:${own.body.id}`],
    );
    expect(left!.n).toBe(0);
  });

  it('shows a member the usage of their own tokens in the team, filtered', async () => {
    const mine = (
      await h
        .api(memberA.token)
        .post(`/api/my/teams/${teamA.id}/tokens`, { name: 'usage' })
        .expect(201)
    ).body.id as number;
    const colleague = (
      await h
        .api(memberA2.token)
        .post(`/api/my/teams/${teamA.id}/tokens`, { name: 'usage2' })
        .expect(201)
    ).body.id as number;
    const log = (tokenId: number, teamId: number, model: string) =>
      query(
        h.databaseUrl,
        `INSERT INTO "UsageLog" ("requestId", "tokenId", "teamId", endpoint, model, status, "latencyMs", cost, "requestedAt")
         VALUES ($1, $2, $3, 'chat.completions', $4, 200, 5, 100, now())`,
        [`req-${randomSuffix()}${randomSuffix()}`, tokenId, teamId, model],
      );
    await log(mine, teamA.id, 'gpt-4o');
    await log(mine, teamA.id, 'claude-3-opus');
    await log(colleague, teamA.id, 'gpt-4o');
    await log(tokenB, teamB.id, 'gpt-4o');
    const all = await h.api(memberA.token).get(`/api/my/teams/${teamA.id}/usage`).expect(200);
    expect(all.body.items.map((u: { tokenId: number }) => u.tokenId)).toEqual([mine, mine]);
    const filtered = await h
      .api(memberA.token)
      .get(`/api/my/teams/${teamA.id}/usage?model=gpt-4o`)
      .expect(200);
    expect(filtered.body.total).toBe(1);
    // A colleague's token id as a filter finds nothing.
    const theirs = await h
      .api(memberA.token)
      .get(`/api/my/teams/${teamA.id}/usage?tokenId=${colleague}`)
      .expect(200);
    expect(theirs.body.items).toEqual([]);
    // The administrators' usage and overview split and filter by team.
    const byTeam = await api.get(`/api/usage/logs?teamId=${teamB.id}`).expect(200);
    expect(byTeam.body.items.map((u: { teamId: number }) => u.teamId)).toEqual([teamB.id]);
    const summary = await api.get('/api/usage/summary?groupBy=team').expect(200);
    expect(summary.body.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ key: String(teamA.id), label: teamA.name, requests: 3 }),
      ]),
    );
    const series = await api
      .get(`/api/overview/series?splitBy=team&teamId=${teamA.id}`)
      .expect(200);
    expect(series.body.lines.map((l: { key: string }) => l.key)).toEqual([String(teamA.id)]);
  });

  it("answers 404 to every member route naming another team's ids", async () => {
    const b = h.api(memberA.token);
    const routes: [string, () => ReturnType<typeof b.get>][] = [
      ['team', () => b.get(`/api/my/teams/${teamB.id}`)],
      ['tokens', () => b.get(`/api/my/teams/${teamB.id}/tokens`)],
      ['create token', () => b.post(`/api/my/teams/${teamB.id}/tokens`, { name: 'x' })],
      ['revoke token', () => b.delete(`/api/my/teams/${teamB.id}/tokens/${tokenB}`)],
      ['revoke via own team', () => b.delete(`/api/my/teams/${teamA.id}/tokens/${tokenB}`)],
      ['usage', () => b.get(`/api/my/teams/${teamB.id}/usage`)],
      ['usage of their token', () => b.get(`/api/my/teams/${teamB.id}/usage?tokenId=${tokenB}`)],
      ['ledger', () => b.get(`/api/my/teams/${teamB.id}/ledger`)],
      ['redeem', () => b.post(`/api/my/teams/${teamB.id}/redeem`, { code: 'SY-0000-0000-0000' })],
    ];
    for (const [name, call] of routes) {
      const response = await call();
      expect([name, response.status]).toEqual([name, 404]);
      expect(response.text).not.toContain(teamB.name);
    }
    // Team B's token is untouched, and no member may add themselves to a team.
    const [row] = await query<{ n: number }>(
      h.databaseUrl,
      `SELECT count(*)::int AS n FROM "Token" WHERE id = $1`,
      [tokenB],
    );
    expect(row!.n).toBe(1);
    await b.post(`/api/teams/${teamB.id}/members`, { userId: memberA.id }).expect(403);
    await b.get(`/api/teams/${teamB.id}`).expect(403);
    await b.get(`/api/budgets?teamId=${teamB.id}`).expect(403);
  });

  it('redeems a code once for a balance team: used 409, expired 410, unknown 404', async () => {
    const made = await api
      .post('/api/redemption-batches', { value: 5_000_000, count: 3, expiresAt: null, note: 'x' })
      .expect(201);
    const codes = made.body.codes as string[];
    expect(codes).toHaveLength(3);
    const lines = (made.body.csv as string).trim().split('\n');
    expect(lines[0]).toBe('code,value_micro_dollars,expires_at,batch_id');
    expect(lines.slice(1)).toEqual(codes.map((c) => `${c},5000000,,${made.body.batch.id}`));
    const stored = await query<{ row: string }>(
      h.databaseUrl,
      `SELECT c::text AS row FROM "RedemptionCode" c WHERE "batchId" = $1`,
      [made.body.batch.id],
    );
    for (const code of codes) expect(JSON.stringify(stored)).not.toContain(code.slice(3));
    // Listing never shows the codes again.
    const batches = await api.get('/api/redemption-batches').expect(200);
    expect(batches.text).not.toContain(codes[0]!);

    const member = h.api(memberA.token, ip());
    const redeemed = await member
      .post(`/api/my/teams/${teamA.id}/redeem`, {
        code: codes[0]!.toLowerCase().replace(/-/g, ' '),
      })
      .expect(200);
    expect(redeemed.body).toMatchObject({ credited: 5_000_000, balance: 5_000_000 });
    const used = await member
      .post(`/api/my/teams/${teamA.id}/redeem`, { code: codes[0] })
      .expect(409);
    expect(used.body.error.code).toBe('code_used');
    const unknown = await member
      .post(`/api/my/teams/${teamA.id}/redeem`, { code: 'SY-0000-0000-0000' })
      .expect(404);
    expect(unknown.body.error.code).toBe('not_found');
    const budgetBilled = await member
      .post(`/api/my/teams/${budgetTeam.id}/redeem`, { code: codes[1] })
      .expect(409);
    expect(budgetBilled.body.error.code).toBe('conflict');
    await query(
      h.databaseUrl,
      `UPDATE "RedemptionBatch" SET "expiresAt" = now() - interval '1 minute' WHERE id = $1`,
      [made.body.batch.id],
    );
    const expired = await member
      .post(`/api/my/teams/${teamA.id}/redeem`, { code: codes[1] })
      .expect(410);
    expect(expired.body.error.code).toBe('code_expired');

    const listed = await api.get('/api/redemption-batches').expect(200);
    expect(
      listed.body.items.find((b: { id: number }) => b.id === made.body.batch.id),
    ).toMatchObject({
      used: 1,
      unused: 2,
      expired: true,
    });
    const detail = await api.get(`/api/redemption-batches/${made.body.batch.id}/codes`).expect(200);
    expect(detail.body.items.filter((c: { redeemedBy: string | null }) => c.redeemedBy)).toEqual([
      expect.objectContaining({ redeemedBy: memberA.username, redeemedTeamId: teamA.id }),
    ]);
    const ledger = await h.api(memberA.token).get(`/api/my/teams/${teamA.id}/ledger`).expect(200);
    expect(ledger.body.items).toEqual([
      expect.objectContaining({
        kind: 'redeem',
        amount: 5_000_000,
        balanceAfter: 5_000_000,
        actorId: memberA.id,
      }),
    ]);
  });

  it('limits failed redemptions per member and per address, whatever the code', async () => {
    const made = await api
      .post('/api/redemption-batches', { value: 1, count: 2, expiresAt: null })
      .expect(201);
    const guesser = await h.session('member');
    await api.post(`/api/teams/${teamB.id}/members`, { userId: guesser.id }).expect(201);
    const from = h.api(guesser.token, ip());
    for (let i = 0; i < 5; i += 1) {
      await from
        .post(`/api/my/teams/${teamB.id}/redeem`, { code: `SY-AAAA-AAAA-000${i}` })
        .expect(404);
    }
    const limited = await from
      .post(`/api/my/teams/${teamB.id}/redeem`, { code: made.body.codes[0] })
      .expect(429);
    expect(limited.body.error.code).toBe('too_many_attempts');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);

    // Per address: two members from one address share its count of 8.
    const address = ip();
    const one = h.api(memberB.token, address);
    for (let i = 0; i < 5; i += 1) {
      await one
        .post(`/api/my/teams/${teamB.id}/redeem`, { code: `SY-BBBB-BBBB-000${i}` })
        .expect(404);
    }
    const other = await h.session('member');
    await api.post(`/api/teams/${teamB.id}/members`, { userId: other.id }).expect(201);
    const two = h.api(other.token, address);
    for (let i = 0; i < 3; i += 1) {
      await two
        .post(`/api/my/teams/${teamB.id}/redeem`, { code: `SY-CCCC-CCCC-000${i}` })
        .expect(404);
    }
    await two.post(`/api/my/teams/${teamB.id}/redeem`, { code: made.body.codes[1] }).expect(429);
    // From another address the same member still redeems: 4 of their 5 tries used (a
    // refused try counts too).
    await h
      .api(other.token, ip())
      .post(`/api/my/teams/${teamB.id}/redeem`, { code: made.body.codes[1] })
      .expect(200);
  });
});
