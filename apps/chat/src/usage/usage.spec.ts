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

// Usage per day and per model, for a user and for the administrators, from real replies
// of a real mock-upstream process.

interface Usage {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}
interface ModelUsage extends Usage {
  model: string;
}

const DAY_MS = 86_400_000;
const dayKey = (msAgo = 0) => new Date(Date.now() - msAgo).toISOString().slice(0, 10);

describe('usage per day and per model', () => {
  let chat: ChatHarness;
  let mock: MockUpstream;
  let admin: Record<string, string>;
  let alice: { id: number; token: string };
  let bob: { id: number; token: string };
  /** What each reply used, as its done event told. */
  const served: { userId: number; model: string; usage: Usage }[] = [];

  const ask = async (who: { id: number; token: string }, model: string) => {
    const created = await chat.api
      .post('/api/conversations')
      .set(bearer(who.token))
      .send({ model })
      .expect(201);
    const reply = await sendMessage(chat, who.token, created.body.id as string, {
      content: `hello ${model}`,
    });
    expect(reply.status).toBe(200);
    const usage = reply.events.at(-1)!.data.usage as Omit<Usage, 'requests' | 'totalTokens'>;
    served.push({
      userId: who.id,
      model,
      usage: { requests: 1, ...usage, totalTokens: usage.promptTokens + usage.completionTokens },
    });
  };

  /** Sums what `served` holds per model, most tokens first, like the API. */
  const expectedModels = (userId?: number): ModelUsage[] => {
    const totals = new Map<string, Usage>();
    for (const entry of served.filter((s) => userId === undefined || s.userId === userId)) {
      const sum = totals.get(entry.model) ?? {
        requests: 0,
        promptTokens: 0,
        completionTokens: 0,
        totalTokens: 0,
      };
      for (const key of Object.keys(sum) as (keyof Usage)[]) sum[key] += entry.usage[key];
      totals.set(entry.model, sum);
    }
    return [...totals]
      .map(([model, usage]) => ({ model, ...usage }))
      .sort((a, b) => b.totalTokens - a.totalTokens || a.model.localeCompare(b.model));
  };

  beforeAll(async () => {
    await resetChatData();
    mock = await startMockUpstream(['sk-mock-usage']);
    chat = await startChat();
    admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
    for (const name of ['gpt-4o', 'gpt-4o-mini']) {
      await chat.api.post('/api/admin/models').set(admin).send({ name, open: true }).expect(201);
    }
    await chat.api
      .post('/api/admin/api-keys')
      .set(admin)
      .send({ address: mock.url, purpose: 'chat', key: 'sk-mock-usage' })
      .expect(201);
    alice = await newUser(chat.api, 'alice');
    bob = await newUser(chat.api, 'bob');
    await ask(alice, 'gpt-4o');
    await ask(alice, 'gpt-4o');
    await ask(alice, 'gpt-4o-mini');
    await ask(bob, 'gpt-4o-mini');
    // A day recorded before usage was counted per model: it stays in the daily totals.
    await query(
      process.env.DATABASE_URL!,
      `INSERT INTO "ChatUsageDay" ("userId", "day", "requests", "promptTokens", "completionTokens")
       VALUES ($1, $2, 5, 100, 50)`,
      [alice.id, dayKey(3 * DAY_MS)],
    );
    // Two processes and four whole replies: more than the default hook time on a busy machine.
  }, 120_000);

  afterAll(async () => {
    await chat?.close();
    await mock?.stop();
  });

  it("breaks the user's period down by model, beside the days", async () => {
    const response = await chat.api
      .get('/api/usage/daily')
      .query({ days: 7 })
      .set(bearer(alice.token))
      .expect(200);
    const body = response.body as { items: (Usage & { day: string })[]; models: ModelUsage[] };
    expect(body.items).toHaveLength(7);
    expect(body.items.at(-1)!.day).toBe(dayKey());
    expect(body.items.at(-4)).toEqual({
      day: dayKey(3 * DAY_MS),
      requests: 5,
      promptTokens: 100,
      completionTokens: 50,
      totalTokens: 150,
    });
    const models = expectedModels(alice.id);
    expect(models.map((m) => m.model).sort()).toEqual(['gpt-4o', 'gpt-4o-mini']);
    expect(body.models).toEqual(models);
    // The models add up to today's totals: every reply today was counted per model.
    const today = body.items.at(-1)!;
    expect(today.requests).toBe(3);
    expect(today.totalTokens).toBe(models.reduce((sum, m) => sum + m.totalTokens, 0));

    // Another user's usage is not in it, and a shorter period leaves the old day out.
    const short = await chat.api
      .get('/api/usage/daily')
      .query({ days: 1 })
      .set(bearer(bob.token))
      .expect(200);
    expect(short.body.models).toEqual(expectedModels(bob.id));
    const { model: _model, ...bobsUsage } = expectedModels(bob.id)[0]!;
    expect(short.body.items).toEqual([{ day: dayKey(), ...bobsUsage }]);
  });

  it('refuses a period that is not a whole number of days from 1 to 366', async () => {
    for (const days of ['0', '367', '1.5', 'week']) {
      const refused = await chat.api
        .get('/api/usage/daily')
        .query({ days })
        .set(bearer(alice.token))
        .expect(400);
      expect(refused.body.error.code).toBe('validation_failed');
      const refusedAdmin = await chat.api
        .get('/api/admin/usage')
        .query({ days })
        .set(admin)
        .expect(400);
      expect(refusedAdmin.body.error.code).toBe('validation_failed');
    }
  });

  it("gives administrators everyone's days and the top models", async () => {
    const response = await chat.api
      .get('/api/admin/usage')
      .query({ days: 7 })
      .set(admin)
      .expect(200);
    const body = response.body as {
      items: (Usage & { day: string; users: number })[];
      total: number;
      users: number;
      models: ModelUsage[];
    };
    expect(body.total).toBe(7);
    expect(body.users).toBe(2);
    const everyone = expectedModels();
    const today = body.items.at(-1)!;
    expect(today).toMatchObject({ day: dayKey(), users: 2, requests: 4 });
    expect(today.totalTokens).toBe(everyone.reduce((sum, m) => sum + m.totalTokens, 0));
    expect(body.items.at(-4)).toMatchObject({ users: 1, requests: 5, totalTokens: 150 });
    expect(body.items.filter((day) => day.users === 0)).toHaveLength(5);
    expect(body.models).toEqual(everyone);
  });

  it('keeps the overview from users who are not administrators', async () => {
    const refused = await chat.api.get('/api/admin/usage').set(bearer(alice.token)).expect(403);
    expect(refused.body.error.code).toBe('forbidden');
    await chat.api.get('/api/admin/usage').expect(401);
  });
});
