import { query } from '@switchyard/testing';
import OpenAI from 'openai';
import { Stack, STACK_START_TIMEOUT_MS, uniqueName } from '../support/stack.js';

// A key reads its own spending (docs/specification.md, "A key's own spending"): one-api's
// billing routes as chat clients call them, and `/v1/key/info`, read with the official
// openai SDK's raw requests (`client.get`), as a client with no gateway-specific code would.

interface Subscription {
  object: string;
  has_payment_method: boolean;
  soft_limit_usd: number;
  hard_limit_usd: number;
  system_hard_limit_usd: number;
  access_until: number;
}

interface KeyInfo {
  id: number;
  name: string;
  team: { id: number; name: string; models: string[]; billing: string } | null;
  models: string[];
  spent: number;
  quota: { limit: number; spent: number; remaining: number } | null;
  budgets: {
    level: string;
    period: string;
    amount: number;
    spent: number;
    remaining: number;
    soft_percent: number | null;
    period_start: string;
    resets_at: string | null;
  }[];
  available: number | null;
  unit: string;
}

type Period = 'none' | 'day' | 'week' | 'month';

/** A period's start and end in UTC, worked out here rather than by the code under test. */
function utcPeriod(period: Period, now: Date): { start: Date; end: Date | null } {
  if (period === 'none') return { start: new Date(0), end: null };
  const [y, m, d] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
  if (period === 'month')
    return { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) };
  if (period === 'day')
    return { start: new Date(Date.UTC(y, m, d)), end: new Date(Date.UTC(y, m, d + 1)) };
  const sinceMonday = (now.getUTCDay() + 6) % 7;
  return {
    start: new Date(Date.UTC(y, m, d - sinceMonday)),
    end: new Date(Date.UTC(y, m, d - sinceMonday + 7)),
  };
}

describe('gateway: a key reads its own spending', () => {
  const stack = new Stack();

  beforeAll(async () => {
    await stack.start();
  }, STACK_START_TIMEOUT_MS);
  afterAll(() => stack.stop());

  const subscription = (client: OpenAI) =>
    client.get<Subscription>('/dashboard/billing/subscription');
  const usage = (client: OpenAI) =>
    client.get<{ object: string; total_usage: number }>('/dashboard/billing/usage', {
      query: { start_date: '2026-11-01', end_date: '2026-12-01' },
    });
  const keyInfo = (client: OpenAI) => client.get<KeyInfo>('/key/info');

  it('answers a token with a quota as one-api does: the balance is hard limit minus usage', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000);
    const token = await stack.createToken({ quota: 5_000_000, usedQuota: 1_250_000, expiresAt });
    const client = stack.client(token.key);
    const { data, response } = await subscription(client).withResponse();
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    expect(data).toEqual({
      object: 'billing_subscription',
      has_payment_method: true,
      soft_limit_usd: 5,
      hard_limit_usd: 5,
      system_hard_limit_usd: 5,
      access_until: Math.floor(expiresAt.getTime() / 1000),
    });
    const used = await usage(client);
    expect(used).toEqual({ object: 'list', total_usage: 125 });
    // What a chat client shows as the balance: 3.75 USD left.
    expect(data.hard_limit_usd - used.total_usage / 100).toBeCloseTo(3.75, 9);
  });

  it("answers one-api's unlimited for a token nothing limits", async () => {
    const client = stack.client((await stack.createToken()).key);
    const data = await subscription(client);
    expect(data.hard_limit_usd).toBe(100_000_000);
    expect(data.access_until).toBe(0);
    const info = await keyInfo(client);
    expect(info).toMatchObject({ quota: null, budgets: [], available: null, team: null });
  });

  it('tells a team token its budgets at every level, with this period’s spend and reset, narrowest first', async () => {
    const [user] = await query<{ id: number }>(
      stack.databaseUrl,
      `INSERT INTO "AdminUser" (username, "passwordHash", role, "updatedAt")
       VALUES ($1, 'x', 'member', now()) RETURNING id`,
      [uniqueName('member')],
    );
    const teamName = uniqueName('team');
    const [team] = await query<{ id: number }>(
      stack.databaseUrl,
      `INSERT INTO "Team" (name, models, "updatedAt") VALUES ($1, $2, now()) RETURNING id`,
      [teamName, ['gpt-4o*']],
    );
    const token = await stack.createToken({
      name: 'reporting bot',
      quota: 50_000_000,
      usedQuota: 4_000_000,
      models: ['gpt-4o-mini'],
    });
    await query(
      stack.databaseUrl,
      `UPDATE "Token" SET "teamId" = $2, "ownerId" = $3 WHERE id = $1`,
      [token.id, team!.id, user!.id],
    );
    const member = `member:${team!.id}:${user!.id}`;
    const budgets: [string, string, string, number, number | null, number][] = [
      // subject, level, period, amount, soft percent, spent this period
      [`token:${token.id}`, 'token', 'month', 2_000_000, 80, 500_000],
      [member, 'member', 'day', 1_000_000, null, 400_000],
      [`team:${team!.id}`, 'team', 'week', 10_000_000, 90, 9_700_000],
      ['gateway', 'gateway', 'none', 1_000_000_000, null, 12_000_000],
    ];
    const now = new Date();
    for (const [subject, level, period, amount, soft, spent] of budgets) {
      await query(
        stack.databaseUrl,
        `INSERT INTO "Budget" (subject, level, "teamId", "userId", "tokenId", amount, period, "softPercent", "updatedAt")
         VALUES ($1, $2::"BudgetLevel", $3, $4, $5, $6, $7::"BudgetPeriod", $8, now())`,
        [
          subject,
          level,
          level === 'team' || level === 'member' ? team!.id : null,
          level === 'member' ? user!.id : null,
          level === 'token' ? token.id : null,
          amount,
          period,
          soft,
        ],
      );
      const { start } = utcPeriod(period as Period, now);
      await query(
        stack.databaseUrl,
        `INSERT INTO "BudgetSpend" (subject, "periodStart", spent, "updatedAt") VALUES ($1, $2, $3, now())`,
        [subject, start, spent],
      );
      // Last period's spend is not this period's.
      if (period !== 'none')
        await query(
          stack.databaseUrl,
          `INSERT INTO "BudgetSpend" (subject, "periodStart", spent, "updatedAt") VALUES ($1, $2, $3, now())`,
          [subject, new Date(start.getTime() - 40 * 86_400_000), 99_000_000],
        );
    }
    const client = stack.client(token.key);

    const info = await keyInfo(client);
    expect(info).toMatchObject({
      id: token.id,
      name: 'reporting bot',
      models: ['gpt-4o-mini'],
      team: { id: team!.id, name: teamName, models: ['gpt-4o*'], billing: 'budget' },
      spent: 4_000_000,
      quota: { limit: 50_000_000, spent: 4_000_000, remaining: 46_000_000 },
      unit: 'micro_usd',
    });
    expect(info.budgets).toEqual(
      budgets.map(([, level, period, amount, soft, spent]) => ({
        level,
        period,
        amount,
        spent,
        remaining: amount - spent,
        soft_percent: soft,
        period_start: utcPeriod(period as Period, now).start.toISOString(),
        resets_at: utcPeriod(period as Period, now).end?.toISOString() ?? null,
      })),
    );
    // The team's week is the tightest: 0.30 USD left.
    expect(info.available).toBe(300_000);
    const data = await subscription(client);
    expect(data.hard_limit_usd).toBeCloseTo(4.3, 9);
    expect(data.hard_limit_usd - (await usage(client)).total_usage / 100).toBeCloseTo(0.3, 9);

    // Another edge counts periods in another zone: the member's day resets at its midnight.
    const kolkata = await stack.startEdge({ BUDGET_TIME_ZONE: 'Asia/Kolkata' });
    const there = await stack.client(token.key, { edge: kolkata }).get<KeyInfo>('/key/info');
    // India is 5:30 ahead of UTC all year: its midnight is 18:30 UTC, within a day.
    const resets = new Date(there.budgets[1]!.resets_at!).getTime();
    expect(there.budgets[1]!.resets_at).toMatch(/T18:30:00\.000Z$/);
    expect(resets - Date.now()).toBeGreaterThan(0);
    expect(resets - Date.now()).toBeLessThanOrEqual(86_400_000);
  });

  it('lets a spent token read that it is spent, and refuses no token or a disabled one', async () => {
    const spent = await stack.createToken({ quota: 1_000_000, usedQuota: 1_000_000 });
    const data = await subscription(stack.client(spent.key));
    expect(data.hard_limit_usd).toBe(1);
    expect((await keyInfo(stack.client(spent.key))).available).toBe(0);

    const bare = await fetch(`${stack.edge.url}/v1/key/info`);
    expect(bare.status).toBe(401);
    expect(((await bare.json()) as { error: { code: string } }).error.code).toBe('invalid_api_key');

    const disabled = await stack.createToken({ status: 'disabled' });
    const refused = await keyInfo(stack.client(disabled.key)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((refused as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe(
      'token_disabled',
    );
  });
});
