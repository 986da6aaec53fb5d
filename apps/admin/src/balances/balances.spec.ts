import { query } from '@switchyard/testing';
import { AdminHarness, randomSuffix, type Session } from '../testing/admin-harness.fixture.js';

// Team balances (docs/teams.md, "Balances"): every change a ledger row with the balance it
// left, the balance always the sum of its ledger, under any mix of concurrent changes.

describe('team balances', () => {
  let h: AdminHarness;
  let admin: Session;
  let viewer: Session;
  let member: Session;
  let api: ReturnType<AdminHarness['api']>;

  beforeAll(async () => {
    h = await AdminHarness.start({
      name: 'balances',
      // Many redemptions in flight at once are each charged until they succeed.
      env: { REDEEM_MAX_FAILURES_PER_MEMBER: '100000', REDEEM_MAX_FAILURES_PER_IP: '100000' },
    });
    admin = await h.session('admin');
    viewer = await h.session('viewer');
    member = await h.session('member');
    api = h.api(admin.token);
  });

  afterAll(async () => {
    await h.close();
  });

  const team = async (billing: 'balance' | 'budget') => {
    const created = await api
      .post('/api/teams', { name: `bal-${randomSuffix()}`, billing })
      .expect(201);
    return created.body.id as number;
  };

  const ledgerOf = (teamId: number) =>
    query<{ kind: string; amount: string; balanceAfter: string }>(
      h.databaseUrl,
      `SELECT kind, amount::text, "balanceAfter"::text FROM "BalanceEntry" WHERE "teamId" = $1 ORDER BY id`,
      [teamId],
    );

  const balanceOf = async (teamId: number) =>
    BigInt(
      (
        await query<{ balance: string }>(
          h.databaseUrl,
          `SELECT balance::text FROM "Team" WHERE id = $1`,
          [teamId],
        )
      )[0]!.balance,
    );

  it('credits and adjusts a balance team, each change a ledger entry, never below zero', async () => {
    const id = await team('balance');
    const credited = await api
      .post(`/api/teams/${id}/balance/credits`, { amount: 10_000_000, reason: 'invoice 1' })
      .expect(201);
    expect(credited.body).toMatchObject({
      kind: 'credit',
      amount: 10_000_000,
      balanceAfter: 10_000_000,
      reason: 'invoice 1',
      actorId: admin.id,
    });
    await h.event('team.changed', (e) => e.teamId === id);
    const adjusted = await api
      .post(`/api/teams/${id}/balance/adjustments`, { amount: -2_500_000, reason: 'correction' })
      .expect(201);
    expect(adjusted.body).toMatchObject({ amount: -2_500_000, balanceAfter: 7_500_000 });
    const below = await api
      .post(`/api/teams/${id}/balance/adjustments`, { amount: -7_500_001, reason: 'too much' })
      .expect(409);
    expect(below.body.error.code).toBe('balance_below_zero');

    const ledger = await h.api(viewer.token).get(`/api/teams/${id}/balance/ledger`).expect(200);
    expect(ledger.body.total).toBe(2);
    expect(ledger.body.items.map((e: { kind: string }) => e.kind)).toEqual(['adjust', 'credit']);
    expect((await api.get(`/api/teams/${id}`).expect(200)).body.balance).toBe(7_500_000);
    expect((await h.auditOf('team', id)).map((a) => a.action)).toEqual([
      'team.create',
      'balance.credit',
      'balance.adjust',
    ]);
  });

  it('refuses bad amounts, a team on budgets, and anyone but an administrator', async () => {
    const id = await team('balance');
    for (const [path, body, field] of [
      ['credits', { amount: 0, reason: 'x' }, 'amount'],
      ['credits', { amount: -5, reason: 'x' }, 'amount'],
      ['credits', { amount: 1.5, reason: 'x' }, 'amount'],
      ['credits', { amount: 5, reason: ' ' }, 'reason'],
      ['adjustments', { amount: 0, reason: 'x' }, 'amount'],
      ['adjustments', { amount: '5', reason: 'x' }, 'amount'],
    ] as const) {
      const response = await api.post(`/api/teams/${id}/balance/${path}`, body).expect(400);
      expect(response.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
    const budget = await team('budget');
    const refused = await api
      .post(`/api/teams/${budget}/balance/credits`, { amount: 5, reason: 'x' })
      .expect(409);
    expect(refused.body.error.code).toBe('conflict');
    await api.post('/api/teams/2147483000/balance/credits', { amount: 5, reason: 'x' }).expect(404);
    await h
      .api(viewer.token)
      .post(`/api/teams/${id}/balance/credits`, { amount: 5, reason: 'x' })
      .expect(403);
    await h.api(member.token).get(`/api/teams/${id}/balance/ledger`).expect(403);
  });

  it('keeps balance = sum of the ledger after 1,000 random concurrent credits, adjustments and redemptions', async () => {
    const id = await team('balance');
    await api.post(`/api/teams/${id}/members`, { userId: member.id }).expect(201);
    const batch = await api
      .post('/api/redemption-batches', { value: 250_000, count: 1000, expiresAt: null })
      .expect(201);
    const codes = [...(batch.body.codes as string[])];

    // A fixed seed: a failure can be replayed.
    let seed = 20261128;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const operations = Array.from({ length: 1000 }, () => {
      const draw = random();
      const amount = 1 + Math.floor(random() * 1_000_000);
      if (draw < 0.4) return { kind: 'credit' as const, amount };
      if (draw < 0.7) return { kind: 'adjust' as const, amount: random() < 0.5 ? -amount : amount };
      return { kind: 'redeem' as const, code: codes.pop()! };
    });
    const outcomes = { applied: 0, belowZero: 0, redeemed: 0 };
    const memberApi = h.api(member.token);
    let next = 0;
    const worker = async () => {
      while (next < operations.length) {
        const op = operations[next++]!;
        const response =
          op.kind === 'redeem'
            ? await memberApi.post(`/api/my/teams/${id}/redeem`, { code: op.code })
            : await api.post(
                `/api/teams/${id}/balance/${op.kind === 'credit' ? 'credits' : 'adjustments'}`,
                { amount: op.amount, reason: `random ${op.kind}` },
              );
        if (response.status === 201 || response.status === 200) {
          outcomes.applied += 1;
          if (op.kind === 'redeem') outcomes.redeemed += 1;
        } else if (response.body.error?.code === 'balance_below_zero') {
          outcomes.belowZero += 1;
        } else {
          throw new Error(`${op.kind}: ${response.status} ${response.text}`);
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));

    const ledger = await ledgerOf(id);
    expect(ledger).toHaveLength(outcomes.applied);
    expect(outcomes.applied + outcomes.belowZero).toBe(1000);
    let running = 0n;
    for (const entry of ledger) {
      running += BigInt(entry.amount);
      // Each entry's balanceAfter follows the one before: no change was lost or reordered.
      expect(BigInt(entry.balanceAfter)).toBe(running);
      expect(running >= 0n).toBe(true);
    }
    expect(await balanceOf(id)).toBe(running);
    expect(ledger.filter((e) => e.kind === 'redeem')).toHaveLength(outcomes.redeemed);
    const [used] = await query<{ n: number }>(
      h.databaseUrl,
      `SELECT count(*)::int AS n FROM "RedemptionCode" WHERE "batchId" = $1 AND "redeemedAt" IS NOT NULL`,
      [batch.body.batch.id],
    );
    expect(used!.n).toBe(outcomes.redeemed);
    // Changes queue on the team's row: on this shared machine 1,000 take up to a minute.
  }, 240_000);
});
