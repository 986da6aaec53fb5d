import { periodStart } from '@switchyard/domain';
import { query } from '@switchyard/testing';
import { AdminHarness, randomSuffix, type Session } from '../testing/admin-harness.fixture.js';

// Teams, their members and budgets at every level through the HTTP API, against the run's
// Postgres: what administrators manage and what each bad input is told (docs/teams.md).

const ZONE = 'America/New_York';

interface TeamView {
  id: number;
  name: string;
  members: { userId: number; username: string }[];
  [field: string]: unknown;
}

interface BudgetView {
  id: number;
  subject: string;
  spent: number;
  percent: number;
  remaining: number;
  exceeded: boolean;
  resetsAt: string | null;
  periodStart: string;
  warning?: string;
  [field: string]: unknown;
}

describe('teams and budgets', () => {
  let h: AdminHarness;
  let admin: Session;
  let viewer: Session;
  let member: Session;
  let api: ReturnType<AdminHarness['api']>;

  beforeAll(async () => {
    h = await AdminHarness.start({ name: 'teams', env: { BUDGET_TIME_ZONE: ZONE } });
    admin = await h.session('admin');
    viewer = await h.session('viewer');
    member = await h.session('member');
    api = h.api(admin.token);
  });

  afterAll(async () => {
    await h.close();
  });

  const createTeam = async (overrides: Record<string, unknown> = {}): Promise<TeamView> =>
    (await api.post('/api/teams', { name: `team-${randomSuffix()}`, ...overrides }).expect(201))
      .body as TeamView;

  const spend = (subject: string, start: Date, spent: number) =>
    query(
      h.databaseUrl,
      `INSERT INTO "BudgetSpend" (subject, "periodStart", spent, "updatedAt") VALUES ($1, $2, $3, now())
       ON CONFLICT (subject, "periodStart") DO UPDATE SET spent = EXCLUDED.spent`,
      [subject, start, spent],
    );

  const insertToken = async (teamId: number | null, ownerId: number | null = null) => {
    const [row] = await query<{ id: number }>(
      h.databaseUrl,
      `INSERT INTO "Token" (name, "keyHash", "lastFour", "teamId", "ownerId", "updatedAt")
       VALUES ($1, $2, 'abcd', $3, $4, now()) RETURNING id`,
      [`tok-${randomSuffix()}`, randomSuffix().padEnd(64, '0'), teamId, ownerId],
    );
    return row!.id;
  };

  it('creates a team with its policy, reads it, changes it and publishes each change', async () => {
    const created = await createTeam({
      name: `research-${randomSuffix()}`,
      models: ['gpt-4o', 'claude-*'],
      rateLimit: 120,
      maxTokenDays: 30,
      billing: 'balance',
    });
    expect(created).toMatchObject({
      models: ['gpt-4o', 'claude-*'],
      rateLimit: 120,
      priceGroup: 'default',
      maxTokenDays: 30,
      billing: 'balance',
      balance: 0,
      members: [],
      tokenCount: 0,
    });
    await h.event('team.changed', (e) => e.teamId === created.id);

    const updated = await api
      .patch(`/api/teams/${created.id}`, { rateLimit: null, models: [] })
      .expect(200);
    expect(updated.body).toMatchObject({ rateLimit: null, models: [], maxTokenDays: 30 });
    const read = await h.api(viewer.token).get(`/api/teams/${created.id}`).expect(200);
    expect(read.body).toMatchObject({ id: created.id, budgets: [] });
    const listed = await h.api(viewer.token).get('/api/teams?pageSize=100').expect(200);
    expect(listed.body.items.map((t: TeamView) => t.id)).toContain(created.id);
    expect(await h.auditOf('team', created.id)).toEqual([
      expect.objectContaining({ action: 'team.create', actorId: admin.id }),
      expect.objectContaining({ action: 'team.update', actorId: admin.id }),
    ]);
  });

  it('names each bad field of a team, and refuses an unknown price group and a taken name', async () => {
    const bad = await api
      .post('/api/teams', {
        name: ' ',
        models: ['*'],
        rateLimit: 0,
        maxTokenDays: 1.5,
        billing: 'credit',
      })
      .expect(400);
    expect(bad.body.error.fields.map((f: { field: string }) => f.field).sort()).toEqual([
      'billing',
      'maxTokenDays',
      'models',
      'name',
      'rateLimit',
    ]);
    const group = await api
      .post('/api/teams', { name: `t-${randomSuffix()}`, priceGroup: 'nope' })
      .expect(400);
    expect(group.body.error.fields).toEqual([
      { field: 'priceGroup', message: 'No price group named nope; create it first' },
    ]);
    const team = await createTeam();
    const taken = await api.post('/api/teams', { name: team.name }).expect(409);
    expect(taken.body.error.code).toBe('conflict');
    await api.get('/api/teams/2147483000').expect(404);
  });

  it('adds and removes members, only accounts of role member', async () => {
    const team = await createTeam();
    const added = await api
      .post(`/api/teams/${team.id}/members`, { username: member.username })
      .expect(201);
    expect(added.body.members).toEqual([
      expect.objectContaining({ userId: member.id, username: member.username }),
    ]);
    const again = await api
      .post(`/api/teams/${team.id}/members`, { userId: member.id })
      .expect(409);
    expect(again.body.error.code).toBe('conflict');
    const notMember = await api
      .post(`/api/teams/${team.id}/members`, { userId: viewer.id })
      .expect(400);
    expect(notMember.body.error.fields[0].field).toBe('userId');
    expect(notMember.body.error.message).toContain('role viewer');
    const unknown = await api
      .post(`/api/teams/${team.id}/members`, { username: 'nobody-at-all' })
      .expect(400);
    expect(unknown.body.error.fields[0].field).toBe('username');
    // A viewer reads, never changes.
    await h
      .api(viewer.token)
      .post(`/api/teams/${team.id}/members`, { userId: member.id })
      .expect(403);

    await api
      .put('/api/budgets', {
        level: 'member',
        teamId: team.id,
        userId: member.id,
        amount: 5,
        period: 'day',
      })
      .expect(200);
    await api.delete(`/api/teams/${team.id}/members/${member.id}`).expect(204);
    await api.delete(`/api/teams/${team.id}/members/${member.id}`).expect(404);
    const after = await api.get(`/api/teams/${team.id}`).expect(200);
    expect(after.body.members).toEqual([]);
    // Their member budget went with them.
    expect(after.body.budgets).toEqual([]);
  });

  it('refuses to delete a team that has tokens (409), and deletes it once they are gone', async () => {
    const team = await createTeam();
    const tokenId = await insertToken(team.id);
    const refused = await api.delete(`/api/teams/${team.id}`).expect(409);
    expect(refused.body.error.code).toBe('team_has_tokens');
    await api.delete(`/api/tokens/${tokenId}`).expect(204);
    await api.delete(`/api/teams/${team.id}`).expect(204);
    await api.get(`/api/teams/${team.id}`).expect(404);
  });

  it('sets a budget at each level, with spend this period in the configured time zone', async () => {
    const team = await createTeam();
    await api.post(`/api/teams/${team.id}/members`, { userId: member.id }).expect(201);
    const tokenId = await insertToken(team.id, member.id);
    const now = new Date();

    const teamBudget = (
      await api
        .put('/api/budgets', {
          level: 'team',
          teamId: team.id,
          amount: 10_000_000,
          period: 'month',
          softPercent: 80,
        })
        .expect(200)
    ).body as BudgetView;
    const monthStart = periodStart('month', now, ZONE);
    expect(teamBudget).toMatchObject({
      subject: `team:${team.id}`,
      level: 'team',
      label: team.name,
      amount: 10_000_000,
      spent: 0,
      percent: 0,
      exceeded: false,
      periodStart: monthStart.toISOString(),
    });
    // Midnight of the 1st in New York, not in UTC.
    expect(new Date(teamBudget.resetsAt!).getUTCHours()).toBeGreaterThanOrEqual(4);
    expect(teamBudget.warning).toBeUndefined();
    await h.event('budget.changed', (e) => e.subject === `team:${team.id}`);

    // Spend of this period counts; a row of the previous period does not.
    const dayStart = periodStart('day', now, ZONE);
    await spend(`token:${tokenId}`, dayStart, 750_000);
    await spend(`token:${tokenId}`, new Date(dayStart.getTime() - 86_400_000), 9_999_999);
    const tokenBudget = (
      await api
        .put('/api/budgets', { level: 'token', tokenId, amount: 1_000_000, period: 'day' })
        .expect(200)
    ).body as BudgetView;
    expect(tokenBudget).toMatchObject({
      subject: `token:${tokenId}`,
      teamId: team.id,
      spent: 750_000,
      remaining: 250_000,
      percent: 75,
      periodStart: dayStart.toISOString(),
    });
    await h.event('budget.changed', (e) => e.subject === `token:${tokenId}`);

    const memberBudget = await api
      .put('/api/budgets', {
        level: 'member',
        teamId: team.id,
        userId: member.id,
        amount: 2_000_000,
        period: 'week',
      })
      .expect(200);
    expect(memberBudget.body).toMatchObject({
      subject: `member:${team.id}:${member.id}`,
      label: `${member.username} in ${team.name}`,
      periodStart: periodStart('week', now, ZONE).toISOString(),
    });

    // Setting it again replaces it: one budget per subject.
    const replaced = await api
      .put('/api/budgets', { level: 'team', teamId: team.id, amount: 20_000_000, period: 'month' })
      .expect(200);
    expect(replaced.body).toMatchObject({
      id: teamBudget.id,
      amount: 20_000_000,
      softPercent: null,
    });

    const detail = await api.get(`/api/teams/${team.id}`).expect(200);
    expect(detail.body.budgets.map((b: BudgetView) => b.subject).sort()).toEqual(
      [`member:${team.id}:${member.id}`, `team:${team.id}`, `token:${tokenId}`].sort(),
    );
    expect(await h.auditOf('budget', teamBudget.id)).toEqual([
      expect.objectContaining({ action: 'budget.create' }),
      expect.objectContaining({ action: 'budget.update' }),
    ]);
  });

  it('allows a budget below what is already spent, and says so', async () => {
    const team = await createTeam();
    await spend(`team:${team.id}`, new Date(0), 3_000_000);
    const set = await api
      .put('/api/budgets', { level: 'team', teamId: team.id, amount: 2_000_000, period: 'none' })
      .expect(200);
    expect(set.body).toMatchObject({
      spent: 3_000_000,
      remaining: 0,
      percent: 150,
      exceeded: true,
      resetsAt: null,
      periodStart: new Date(0).toISOString(),
    });
    expect(set.body.warning).toContain('already spent');
  });

  it('names the field of every bad budget', async () => {
    const team = await createTeam();
    const cases: [Record<string, unknown>, string][] = [
      [{ level: 'team', teamId: team.id, amount: -1, period: 'day' }, 'amount'],
      [{ level: 'team', teamId: team.id, amount: 1.5, period: 'day' }, 'amount'],
      [{ level: 'team', teamId: team.id, amount: '100', period: 'day' }, 'amount'],
      [{ level: 'team', teamId: team.id, amount: 100, period: 'year' }, 'period'],
      [
        { level: 'team', teamId: team.id, amount: 100, period: 'day', softPercent: 0 },
        'softPercent',
      ],
      [
        { level: 'team', teamId: team.id, amount: 100, period: 'day', softPercent: 101 },
        'softPercent',
      ],
      [{ level: 'team', amount: 100, period: 'day' }, 'teamId'],
      [{ level: 'token', amount: 100, period: 'day' }, 'tokenId'],
      [{ level: 'member', teamId: team.id, amount: 100, period: 'day' }, 'userId'],
      [
        { level: 'member', teamId: team.id, userId: viewer.id, amount: 100, period: 'day' },
        'userId',
      ],
      [{ level: 'gateway', teamId: team.id, amount: 100, period: 'day' }, 'teamId'],
      [{ level: 'company', amount: 100, period: 'day' }, 'level'],
    ];
    for (const [body, field] of cases) {
      const response = await api.put('/api/budgets', body);
      expect([JSON.stringify(body), response.status]).toEqual([JSON.stringify(body), 400]);
      expect(response.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
    await api
      .put('/api/budgets', { level: 'team', teamId: 2147483000, amount: 1, period: 'day' })
      .expect(404);
    await h
      .api(viewer.token)
      .put('/api/budgets', { level: 'team', teamId: team.id, amount: 1, period: 'day' })
      .expect(403);
  });

  it('lists every budget closest to its cap first, and clears one', async () => {
    const teams = [await createTeam(), await createTeam(), await createTeam()];
    const spent = [100, 900, 500];
    for (const [i, team] of teams.entries()) {
      await spend(`team:${team.id}`, new Date(0), spent[i]!);
      await api
        .put('/api/budgets', { level: 'team', teamId: team.id, amount: 1000, period: 'none' })
        .expect(200);
    }
    const gateway = await api
      .put('/api/budgets', { level: 'gateway', amount: 1_000_000_000_000, period: 'month' })
      .expect(200);
    expect(gateway.body).toMatchObject({ subject: 'gateway', label: 'Gateway' });
    await h.event('budget.changed', (e) => e.subject === 'gateway');

    const listed = await h.api(viewer.token).get('/api/budgets?pageSize=100').expect(200);
    const items = listed.body.items as BudgetView[];
    const percents = items.map((b) => b.percent);
    expect(percents).toEqual([...percents].sort((a, b) => b - a));
    const ours = items
      .filter((b) => teams.some((t) => b.subject === `team:${t.id}`))
      .map((b) => b.subject);
    expect(ours).toEqual([`team:${teams[1]!.id}`, `team:${teams[2]!.id}`, `team:${teams[0]!.id}`]);

    const byTeam = await api.get(`/api/budgets?teamId=${teams[2]!.id}`).expect(200);
    expect(byTeam.body.items.map((b: BudgetView) => b.subject)).toEqual([`team:${teams[2]!.id}`]);

    const id = byTeam.body.items[0].id as number;
    await api.delete(`/api/budgets/${id}`).expect(204);
    await api.delete(`/api/budgets/${id}`).expect(404);
    await api.delete(`/api/budgets/${gateway.body.id}`).expect(204);
    expect((await api.get(`/api/budgets?teamId=${teams[2]!.id}`).expect(200)).body.items).toEqual(
      [],
    );
  });
});
