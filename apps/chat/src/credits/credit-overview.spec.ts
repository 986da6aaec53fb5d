import { query } from '@switchyard/testing';
import {
  ADMIN,
  bearer,
  login,
  newUser,
  resetChatData,
  sendMessage,
  startChat,
  startMockUpstream,
  type ChatHarness,
  type MockUpstream,
} from '../testing/chat-harness.fixture.js';

// The admin overview's credit figures (docs/credits.md, "Overview"): the real app over its
// own database, a few ledger rows written on chosen UTC days, and one real priced reply.

const DAY_MS = 86_400_000;
const midnight = (daysAgo: number): number => {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - daysAgo * DAY_MS;
};
const dayKey = (daysAgo: number): string => new Date(midnight(daysAgo)).toISOString().slice(0, 10);

interface Day {
  day: string;
  grant: number;
  redeem: number;
  invite: number;
  plan: number;
  adjust: number;
  granted: number;
  spent: number;
}

const zero = (day: string): Day => ({
  day,
  grant: 0,
  redeem: 0,
  invite: 0,
  plan: 0,
  adjust: 0,
  granted: 0,
  spent: 0,
});

describe('admin credit overview', () => {
  let chat: ChatHarness;
  let mock: MockUpstream;
  let admin: Record<string, string>;
  let userToken: string;

  /** A ledger row at `at` (the balance is not the subject here: only the overview reads these). */
  const entry = (
    userId: number,
    kind: string,
    amount: number,
    at: number,
    extra: { requestId?: string; model?: string } = {},
  ) =>
    query(
      process.env.DATABASE_URL!,
      `INSERT INTO "CreditEntry" ("userId", "kind", "amount", "balanceAfter", "reason",
         "requestId", "model", "createdAt")
       VALUES ($1, $2::"CreditKind", $3, 0, 'overview spec', $4, $5, $6)`,
      [userId, kind, amount, extra.requestId ?? null, extra.model ?? null, new Date(at)],
    );

  beforeAll(async () => {
    await resetChatData();
    mock = await startMockUpstream(['sk-mock-a']);
    chat = await startChat();
    admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
    await chat.api
      .post('/api/admin/api-keys')
      .set(admin)
      .send({ address: mock.url, key: 'sk-mock-a', purpose: 'chat' })
      .expect(201);
    await chat.api
      .post('/api/admin/models')
      .set(admin)
      .send({ name: 'per-call', open: true, creditsPerCall: 10 })
      .expect(201);

    // Two registrations today: 100 granted each.
    const ann = await newUser(chat.api, 'ann');
    const bob = await newUser(chat.api, 'bob');
    userToken = bob.token;
    // A real reply: its freeze records the model, and a per-call reply keeps all of it.
    const conversation = await chat.api
      .post('/api/conversations')
      .set(bearer(bob.token))
      .send({ model: 'per-call' })
      .expect(201);
    const reply = await sendMessage(chat, bob.token, conversation.body.id as string, {
      content: 'hello',
    });
    expect(reply.events.at(-1)!.event).toBe('done');

    // Two days ago, up to its last millisecond: a plan top-up and a 20-credit freeze…
    const lastOfTwoDaysAgo = midnight(1) - 1;
    await entry(ann.id, 'plan', 30, lastOfTwoDaysAgo);
    await entry(ann.id, 'spend', -20, lastOfTwoDaysAgo, { requestId: 'r-old', model: 'm-old' });
    // …settled yesterday at midnight: the refund names no model, its spend does.
    await entry(ann.id, 'refund', 5, midnight(1), { requestId: 'r-old' });
    await entry(ann.id, 'redeem', 50, midnight(1) + 1000);
    await entry(ann.id, 'invite', 10, midnight(1) + 2000);
    await entry(ann.id, 'adjust', 7, midnight(1) + 3000);
    // A negative adjustment is neither granted nor spent.
    await entry(ann.id, 'adjust', -3, midnight(1) + 4000);
    // A freeze written before the ledger recorded models.
    await entry(ann.id, 'spend', -4, midnight(0) + 1000, { requestId: 'r-legacy' });
    // Forty days ago: outside the default 30 days.
    await entry(ann.id, 'grant', 1000, midnight(40) + 1000);
  });

  afterAll(async () => {
    await chat?.close();
    await mock?.stop();
  });

  it('sums granted by kind and spent (spends less refunds) per UTC day, and spent per model', async () => {
    const { body } = await chat.api.get('/api/admin/credits/overview').set(admin).expect(200);
    expect(body.total).toBe(30);
    expect(body.items).toHaveLength(30);
    expect(body.items[0].day).toBe(dayKey(29));
    expect(body.items.slice(-3)).toEqual([
      { ...zero(dayKey(2)), plan: 30, granted: 30, spent: 20 },
      { ...zero(dayKey(1)), redeem: 50, invite: 10, adjust: 7, granted: 67, spent: -5 },
      { ...zero(dayKey(0)), grant: 200, granted: 200, spent: 14 },
    ]);
    for (const day of body.items.slice(0, -3) as Day[]) expect(day).toEqual(zero(day.day));
    expect(body.models).toEqual([
      { model: 'm-old', spent: 15 },
      { model: 'per-call', spent: 10 },
      { model: null, spent: 4 },
    ]);
    // The models add up to the days.
    const spent = (body.items as Day[]).reduce((sum, day) => sum + day.spent, 0);
    expect(spent).toBe(29);
  });

  it('covers the days asked for, up to a year', async () => {
    const today = await chat.api.get('/api/admin/credits/overview?days=1').set(admin).expect(200);
    expect(today.body.items).toEqual([{ ...zero(dayKey(0)), grant: 200, granted: 200, spent: 14 }]);
    expect(today.body.models).toEqual([
      { model: 'per-call', spent: 10 },
      { model: null, spent: 4 },
    ]);
    const year = await chat.api.get('/api/admin/credits/overview?days=366').set(admin).expect(200);
    expect(year.body.items).toHaveLength(366);
    expect(year.body.items[365 - 40]).toEqual({
      ...zero(dayKey(40)),
      grant: 1000,
      granted: 1000,
    });
  });

  it('refuses a range that is not 1 to 366 whole days, naming the field', async () => {
    for (const days of ['0', '367', '1.5', 'week']) {
      const refused = await chat.api
        .get('/api/admin/credits/overview')
        .query({ days })
        .set(admin)
        .expect(400);
      expect(refused.body.error.code).toBe('validation_failed');
      expect(refused.body.error.message).toContain('days');
    }
  });

  it('is for administrators only', async () => {
    const refused = await chat.api
      .get('/api/admin/credits/overview')
      .set(bearer(userToken))
      .expect(403);
    expect(refused.body.error.code).toBe('forbidden');
    await chat.api.get('/api/admin/credits/overview').expect(401);
  });
});
