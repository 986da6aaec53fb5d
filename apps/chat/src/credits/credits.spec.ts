import { clearRedisNamespace, holdRowLocks, query, waitFor } from '@switchyard/testing';
import {
  ADMIN,
  bearer,
  login,
  newUser,
  parseEvents,
  resetChatData,
  sendMessage,
  startChat,
  startMockUpstream,
  type ChatHarness,
  type MockUpstream,
} from '../testing/chat-harness.fixture.js';
import { type Principal } from '../auth/principal.js';
import { CreditHoldSweeper } from './credit-hold.sweeper.js';
import { CreditPlansService } from './credit-plans.service.js';
import { CreditsService } from './credits.service.js';
import { costOf, worstCase } from './pricing.js';

// Chat credits end to end (docs/credits.md): the real app over its own database and Redis,
// a real mock-upstream behind it.

interface Entry {
  id: number;
  kind: string;
  amount: number;
  balanceAfter: number;
  requestId: string | null;
}

type User = { id: number; username: string; token: string };

describe('chat credits', () => {
  let chat: ChatHarness;
  let mock: MockUpstream;
  let admin: Record<string, string>;

  const balanceOf = async (token: string): Promise<number> =>
    (await chat.api.get('/api/credits').set(bearer(token)).expect(200)).body.balance as number;

  const ledgerOf = async (token: string, search = ''): Promise<Entry[]> =>
    (await chat.api.get(`/api/credits/ledger?pageSize=100${search}`).set(bearer(token)).expect(200))
      .body.items as Entry[];

  /** The stored balance equals the ledger's sum, and each entry's balanceAfter follows on. */
  const expectConsistent = async (userId: number): Promise<number> => {
    const rows = await query<{ amount: number; balanceAfter: number }>(
      process.env.DATABASE_URL!,
      'SELECT "amount", "balanceAfter" FROM "CreditEntry" WHERE "userId" = $1 ORDER BY "id"',
      [userId],
    );
    const [user] = await query<{ credits: number }>(
      process.env.DATABASE_URL!,
      'SELECT "credits" FROM "ChatUser" WHERE "id" = $1',
      [userId],
    );
    let running = 0;
    for (const row of rows) {
      running += row.amount;
      expect(row.balanceAfter).toBe(running);
    }
    expect(user!.credits).toBe(running);
    return running;
  };

  const setBalance = async (user: User, balance: number): Promise<void> => {
    const now = await balanceOf(user.token);
    if (now === balance) return;
    await chat.api
      .post(`/api/admin/users/${user.id}/credits`)
      .set(admin)
      .send({ amount: balance - now, reason: 'test setup', force: true })
      .expect(201);
  };

  const newConversation = async (token: string, model: string): Promise<string> =>
    (await chat.api.post('/api/conversations').set(bearer(token)).send({ model }).expect(201)).body
      .id as string;

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
    for (const model of [
      { name: 'free-chat', open: true },
      { name: 'per-call', open: true, creditsPerCall: 10 },
      { name: 'per-token', open: true, creditsPer1kInput: 3, creditsPer1kOutput: 7 },
    ]) {
      await chat.api.post('/api/admin/models').set(admin).send(model).expect(201);
    }
  });

  afterAll(async () => {
    await chat?.close();
    await mock?.stop();
  });

  beforeEach(async () => {
    await mock.reset();
  });

  describe('the ledger', () => {
    it('grants 100 credits at registration, one grant entry', async () => {
      const user = await newUser(chat.api, 'welcome');
      expect(await balanceOf(user.token)).toBe(100);
      expect(await ledgerOf(user.token)).toMatchObject([
        { kind: 'grant', amount: 100, balanceAfter: 100, reason: 'registration' },
      ]);
    });

    it('grants what the administrator set for later registrations', async () => {
      await chat.api
        .put('/api/admin/chat-settings')
        .set(admin)
        .send({ registrationGrant: 7 })
        .expect(200);
      const user = await newUser(chat.api, 'seven');
      expect(await balanceOf(user.token)).toBe(7);
      await chat.api
        .put('/api/admin/chat-settings')
        .set(admin)
        .send({ registrationGrant: 100 })
        .expect(200);
    });

    it('equals its ledger after 1,000 random operations, ten at a time', async () => {
      const user = await newUser(chat.api, 'random');
      const credits = chat.app.get(CreditsService);
      const kinds = ['grant', 'spend', 'refund', 'redeem', 'adjust'] as const;
      let seed = 42;
      const random = (n: number) => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed % n;
      };
      const price = { perCall: 3, per1kInput: 5, per1kOutput: 11 };
      const one = async (): Promise<void> => {
        const choice = random(7);
        if (choice < 5) {
          const kind = kinds[choice]!;
          const amount = kind === 'spend' ? -(1 + random(40)) : 1 + random(40);
          await credits.apply({
            userId: user.id,
            kind,
            amount: kind === 'adjust' && random(2) === 0 ? -amount : amount,
            reason: 'random',
            allowNegative: random(10) === 0,
          });
          return;
        }
        const hold = await credits
          .freeze(user.id, '00000000-0000-4000-8000-000000000000', 'random', price, {
            texts: ['x'.repeat(random(500))],
            images: 0,
          })
          .catch(() => null);
        if (!hold) return;
        await credits.settle(
          hold,
          { promptTokens: random(600), completionTokens: random(5000) },
          random(3) > 0,
        );
      };
      for (let round = 0; round < 100; round += 1) {
        await Promise.all(Array.from({ length: 10 }, one));
      }
      const balance = await expectConsistent(user.id);
      expect(await balanceOf(user.token)).toBe(balance);
    });

    it('filters the ledger by kind and pages it', async () => {
      const user = await newUser(chat.api, 'pages');
      for (let i = 1; i <= 3; i += 1) {
        await chat.api
          .post(`/api/admin/users/${user.id}/credits`)
          .set(admin)
          .send({ amount: i, reason: `gift ${i}` })
          .expect(201);
      }
      const adjusts = await chat.api
        .get('/api/credits/ledger?kind=adjust&pageSize=2')
        .set(bearer(user.token))
        .expect(200);
      expect(adjusts.body).toMatchObject({ total: 3, balance: 106 });
      expect((adjusts.body.items as Entry[]).map((e) => e.amount)).toEqual([3, 2]);
      const bad = await chat.api
        .get('/api/credits/ledger?kind=theft')
        .set(bearer(user.token))
        .expect(400);
      expect(bad.body.error.fields[0].field).toBe('kind');
    });
  });

  describe('model prices', () => {
    it('are shown in the user model list', async () => {
      const user = await newUser(chat.api, 'picker');
      const models = await chat.api.get('/api/models').set(bearer(user.token)).expect(200);
      expect(models.body.items).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'free-chat', creditsPerCall: 0, creditsPer1kInput: 0 }),
          expect.objectContaining({ name: 'per-call', creditsPerCall: 10 }),
          expect.objectContaining({
            name: 'per-token',
            creditsPer1kInput: 3,
            creditsPer1kOutput: 7,
          }),
        ]),
      );
    });

    it.each([
      ['creditsPerCall', -1],
      ['creditsPer1kInput', 1.5],
      ['creditsPer1kOutput', 1_000_000_000],
      ['creditsPerCall', '5'],
    ])('refuses %s = %p with 400 naming the field', async (field, value) => {
      const response = await chat.api
        .post('/api/admin/models')
        .set(admin)
        .send({ name: `bad-${field}`, [field]: value })
        .expect(400);
      expect(response.body.error.code).toBe('validation_failed');
      const named = new Set(response.body.error.fields.map((f: { field: string }) => f.field));
      expect([...named]).toEqual([field]);
    });
  });

  describe('a priced reply', () => {
    it('freezes the worst case, then charges the usage and returns the rest', async () => {
      const user = await newUser(chat.api, 'tokens');
      const conversationId = await newConversation(user.token, 'per-token');
      const reply = await sendMessage(chat, user.token, conversationId, { content: 'hello sea' });
      expect(reply.events.at(-1)!.event).toBe('done');
      const usage = reply.events.at(-1)!.data.usage as {
        promptTokens: number;
        completionTokens: number;
      };
      const price = { perCall: 0, per1kInput: 3, per1kOutput: 7 };
      const cost = costOf(price, usage.promptTokens, usage.completionTokens);
      expect(await balanceOf(user.token)).toBe(100 - cost);
      const entries = await ledgerOf(user.token);
      expect(entries.slice(0, 2)).toMatchObject([
        { kind: 'refund', requestId: entries[1]!.requestId },
        { kind: 'spend', amount: -worstCase(price, ['hello sea'], 0) },
      ]);
      // The output cap frozen in advance is what the gateway is told.
      const [sent] = (await mock.received('sk-mock-a')) as { max_tokens?: number }[];
      expect(sent!.max_tokens).toBe(4096);
      await expectConsistent(user.id);
    });

    it('has charged the reply by the time its done event arrives', async () => {
      const user = await newUser(chat.api, 'on-done');
      const conversationId = await newConversation(user.token, 'per-token');
      // A slow stream, so the user's row can be locked after the freeze, before the end.
      await mock.fault('sk-mock-a', { chunkDelayMs: 100 }, 1);
      const response = await fetch(`${chat.url}/api/conversations/${conversationId}/messages`, {
        method: 'POST',
        headers: { ...bearer(user.token), 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'hello tide' }),
      });
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      /** Reads on until `seen` holds, or for `quietMs` without a byte: whether it held. */
      let pending: ReturnType<typeof reader.read> | null = null;
      const readUntil = async (seen: RegExp, quietMs: number): Promise<boolean> => {
        while (!seen.test(text)) {
          let timer: NodeJS.Timeout | undefined;
          const quiet = new Promise<null>(
            (resolve) => (timer = setTimeout(resolve, quietMs, null)),
          );
          // A read the quiet outran is still the next one: its bytes are not lost.
          pending ??= reader.read();
          const next = await Promise.race([pending, quiet]);
          clearTimeout(timer);
          if (next === null) return false;
          pending = null;
          if (next.done) throw new Error(`the stream ended without ${seen}: ${text}`);
          text += decoder.decode(next.value, { stream: true });
        }
        return true;
      };
      const doneEvent = /event: done\ndata: [^\n]*\n\n/;
      expect(await readUntil(/event: delta/, 5_000)).toBe(true);
      // The settlement ends the reply's freeze: held back, it must hold back the end too.
      const release = await holdRowLocks(
        process.env.DATABASE_URL!,
        'SELECT 1 FROM "CreditHold" WHERE "userId" = $1',
        [user.id],
      );
      const doneWhileHeld = await readUntil(doneEvent, 600).finally(release);
      expect(doneWhileHeld).toBe(false);
      expect(await readUntil(doneEvent, 5_000)).toBe(true);
      const balance = await balanceOf(user.token);
      await reader.cancel();
      const usage = parseEvents(text).at(-1)!.data.usage as {
        promptTokens: number;
        completionTokens: number;
      };
      const price = { perCall: 0, per1kInput: 3, per1kOutput: 7 };
      expect(balance).toBe(100 - costOf(price, usage.promptTokens, usage.completionTokens));
    });

    it('is refused with 402 before the gateway is called, the message not saved', async () => {
      const user = await newUser(chat.api, 'poor');
      await setBalance(user, 4);
      const conversationId = await newConversation(user.token, 'per-call');
      const reply = await sendMessage(chat, user.token, conversationId, { content: 'hi' });
      expect(reply.status).toBe(402);
      expect(reply.json).toEqual({
        error: {
          code: 'insufficient_credits',
          message: expect.stringContaining('up to 10 credits and your balance is 4'),
          details: { balance: 4, price: 10 },
        },
      });
      expect(await mock.requests()).toMatchObject({ 'sk-mock-a': 0 });
      const messages = await chat.api
        .get(`/api/conversations/${conversationId}/messages`)
        .set(bearer(user.token))
        .expect(200);
      expect(messages.body.items).toEqual([]);
      expect(await balanceOf(user.token)).toBe(4);
    });

    it('returns everything when the gateway fails', async () => {
      const user = await newUser(chat.api, 'failed');
      await mock.fault('sk-mock-a', { status: 500 }, 5);
      const conversationId = await newConversation(user.token, 'per-call');
      const reply = await sendMessage(chat, user.token, conversationId, { content: 'hi' });
      expect(reply.events.at(-1)!.event).toBe('error');
      expect(await balanceOf(user.token)).toBe(100);
      expect((await ledgerOf(user.token)).slice(0, 2)).toMatchObject([
        { kind: 'refund', amount: 10 },
        { kind: 'spend', amount: -10 },
      ]);
      await expectConsistent(user.id);
    });

    it('returns everything when the browser goes away', async () => {
      const user = await newUser(chat.api, 'gone');
      await mock.fault('sk-mock-a', { chunkDelayMs: 300 }, 1);
      const conversationId = await newConversation(user.token, 'per-call');
      const abort = new AbortController();
      const response = await fetch(`${chat.url}/api/conversations/${conversationId}/messages`, {
        method: 'POST',
        headers: { ...bearer(user.token), 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'a long answer with many words in it' }),
        signal: abort.signal,
      });
      const reader = response.body!.getReader();
      let received = '';
      while (!received.includes('event: delta')) {
        const { value } = await reader.read();
        received += new TextDecoder().decode(value);
      }
      abort.abort();
      await waitFor(async () => (await ledgerOf(user.token))[0]?.kind === 'refund' || undefined, {
        what: 'the refund of the cancelled reply',
      });
      // The whole ledger in the comparison, so that a failure shows what happened.
      const entries = (await ledgerOf(user.token)).map((e) => `${e.kind} ${e.amount}`);
      expect({ balance: await balanceOf(user.token), entries }).toEqual({
        balance: 100,
        entries: ['refund 10', 'spend -10', 'grant 100'],
      });
      await expectConsistent(user.id);
    });

    it('never overdraws: of twenty parallel replies with credits for two, exactly two run', async () => {
      const user = await newUser(chat.api, 'parallel');
      await setBalance(user, 25);
      const conversations = await Promise.all(
        Array.from({ length: 20 }, () => newConversation(user.token, 'per-call')),
      );
      const replies = await Promise.all(
        conversations.map((id) => sendMessage(chat, user.token, id, { content: 'race' })),
      );
      const served = replies.filter((r) => r.status === 200);
      const refused = replies.filter((r) => r.status === 402);
      expect(served).toHaveLength(2);
      expect(refused).toHaveLength(18);
      for (const reply of served) expect(reply.events.at(-1)!.event).toBe('done');
      for (const reply of refused) {
        expect(reply.json).toMatchObject({ error: { code: 'insufficient_credits' } });
      }
      expect(await balanceOf(user.token)).toBe(5);
      const [lowest] = await query<{ min: number }>(
        process.env.DATABASE_URL!,
        'SELECT min("balanceAfter") AS min FROM "CreditEntry" WHERE "userId" = $1',
        [user.id],
      );
      expect(lowest!.min).toBeGreaterThanOrEqual(0);
      expect(await mock.requests()).toMatchObject({ 'sk-mock-a': 2 });
      await expectConsistent(user.id);
    });

    it('costs nothing on a free model, even with no credits', async () => {
      const user = await newUser(chat.api, 'free');
      await setBalance(user, 0);
      const conversationId = await newConversation(user.token, 'free-chat');
      const reply = await sendMessage(chat, user.token, conversationId, { content: 'hi' });
      expect(reply.events.at(-1)!.event).toBe('done');
      expect(await balanceOf(user.token)).toBe(0);
    });
  });

  describe('the freeze sweeper', () => {
    const HOUR = 3_600_000;
    const price = { perCall: 10, per1kInput: 0, per1kOutput: 0 };
    const holdsOf = async (userId: number): Promise<number> =>
      (
        await query<{ n: number }>(
          process.env.DATABASE_URL!,
          'SELECT count(*)::int AS n FROM "CreditHold" WHERE "userId" = $1',
          [userId],
        )
      )[0]!.n;

    it('leaves no hold behind a settled reply', async () => {
      const user = await newUser(chat.api, 'settled');
      const conversationId = await newConversation(user.token, 'per-call');
      const reply = await sendMessage(chat, user.token, conversationId, { content: 'hi' });
      expect(reply.events.at(-1)!.event).toBe('done');
      expect(await holdsOf(user.id)).toBe(0);
      // Settled at its full freeze: no refund row, and nothing for the sweeper either.
      expect(await chat.app.get(CreditHoldSweeper).sweep(new Date(Date.now() + 2 * HOUR))).toBe(0);
      expect(await balanceOf(user.token)).toBe(90);
    });

    it('returns a freeze that never settled once it is past the bound, exactly once', async () => {
      const user = await newUser(chat.api, 'crashed');
      const credits = chat.app.get(CreditsService);
      const sweeper = chat.app.get(CreditHoldSweeper);
      // What a process that died mid-reply leaves: a freeze, no settlement.
      const hold = await credits.freeze(user.id, null, 'per-call', price, {
        texts: ['hi'],
        images: 0,
      });
      expect(await balanceOf(user.token)).toBe(90);
      const frozenAt = Date.now();
      // Within the bound (CHAT_CREDIT_HOLD_MAX_MS, an hour) the reply may still be running.
      expect(await sweeper.sweep(new Date(frozenAt + HOUR - 60_000))).toBe(0);
      expect(await balanceOf(user.token)).toBe(90);
      // Past it, five sweepers at once (several chat processes) return it once.
      const later = new Date(frozenAt + HOUR + 60_000);
      const swept = await Promise.all(Array.from({ length: 5 }, () => sweeper.sweep(later)));
      expect(swept.reduce((a, b) => a + b, 0)).toBe(1);
      expect(await sweeper.sweep(later)).toBe(0);
      expect(await balanceOf(user.token)).toBe(100);
      const entries = await ledgerOf(user.token);
      expect(entries.slice(0, 2)).toMatchObject([
        {
          kind: 'refund',
          amount: 10,
          requestId: hold!.requestId,
          reason: 'reply never settled: freeze returned',
        },
        { kind: 'spend', amount: -10, requestId: hold!.requestId },
      ]);
      // A settlement that comes after all (a reply slower than the bound) changes nothing.
      expect(await credits.settle(hold!, null, false)).toBe(false);
      expect(await balanceOf(user.token)).toBe(100);
      expect(await ledgerOf(user.token)).toHaveLength(3);
      expect(await holdsOf(user.id)).toBe(0);
      await expectConsistent(user.id);
    });

    it('does not return a freeze its reply settled while the sweeper ran', async () => {
      const user = await newUser(chat.api, 'race');
      const credits = chat.app.get(CreditsService);
      const sweeper = chat.app.get(CreditHoldSweeper);
      const holds = await Promise.all(
        Array.from({ length: 8 }, () =>
          credits.freeze(user.id, null, 'per-call', price, { texts: ['x'], images: 0 }),
        ),
      );
      expect(await balanceOf(user.token)).toBe(20);
      // Each reply settles (failed: the whole freeze back) while sweepers run past the bound.
      const later = new Date(Date.now() + HOUR + 60_000);
      const [settled, swept] = await Promise.all([
        Promise.all(holds.map((hold) => credits.settle(hold!, null, false))),
        Promise.all([sweeper.sweep(later), sweeper.sweep(later)]),
      ]);
      const bySettle = settled.filter(Boolean).length;
      expect(bySettle + swept.reduce((a, b) => a + b, 0)).toBe(8);
      expect(await balanceOf(user.token)).toBe(100);
      const refunds = await ledgerOf(user.token, '&kind=refund');
      expect(refunds).toHaveLength(8);
      expect(new Set(refunds.map((r) => r.requestId)).size).toBe(8);
      await expectConsistent(user.id);
    });
  });

  describe('plans', () => {
    // Times after the real clock's, so that the app's own scheduler (which runs every
    // minute with the real time) never tops up these subscriptions while a test moves time.
    const at = (iso: string) => new Date(iso);
    const planEntries = async (token: string) =>
      (await ledgerOf(token, '&kind=plan')).map((e) => (e as Entry & { reason: string }).reason);
    let adminPrincipal: Principal;

    beforeAll(async () => {
      const me = await chat.api.get('/api/auth/me').set(admin).expect(200);
      adminPrincipal = { ...(me.body as Principal), modelPermissions: [], sessionHash: '' };
    });

    const newPlan = async (name: string, credits: number, period: 'day' | 'month') =>
      (
        await chat.api
          .post('/api/admin/credit-plans')
          .set(admin)
          .send({ name, credits, period })
          .expect(201)
      ).body as { id: number };

    it('tops a monthly plan up at each boundary, exactly once however many schedulers run', async () => {
      const plans = chat.app.get(CreditPlansService);
      const plan = await newPlan('Gold', 500, 'month');
      const user = await newUser(chat.api, 'gold');
      // Assigned an hour before the month ends: topped up at once for January.
      const assigned = await plans.assign(
        adminPrincipal,
        user.id,
        { planId: plan.id },
        at('2030-01-31T23:00:00Z'),
      );
      expect(assigned).toMatchObject({
        plan: { name: 'Gold', credits: 500, period: 'month' },
        nextTopUpAt: '2030-02-01T00:00:00.000Z',
        balance: 600,
      });
      expect(await plans.runDue(at('2030-01-31T23:59:59.999Z'))).toBe(0);
      expect(await balanceOf(user.token)).toBe(600);
      // At the boundary, five schedulers at once (several chat processes) top up once.
      const runs = await Promise.all(
        Array.from({ length: 5 }, () => plans.runDue(at('2030-02-01T00:00:00Z'))),
      );
      expect(runs.reduce((a, b) => a + b, 0)).toBe(1);
      expect(await plans.runDue(at('2030-02-20T00:00:00Z'))).toBe(0);
      expect(await balanceOf(user.token)).toBe(1100);
      // Stopped for two months: each missed month is topped up once, in order.
      await plans.runDue(at('2030-04-15T08:00:00Z'));
      await plans.runDue(at('2030-04-15T08:00:00Z'));
      expect(await planEntries(user.token)).toEqual([
        'plan Gold for 2030-04',
        'plan Gold for 2030-03',
        'plan Gold for 2030-02',
        'plan Gold for 2030-01',
      ]);
      expect(await balanceOf(user.token)).toBe(2100);
      await expectConsistent(user.id);
    });

    it('tops a daily plan up at each UTC midnight, and stops when it is taken away', async () => {
      const plans = chat.app.get(CreditPlansService);
      const plan = await newPlan('Daily', 20, 'day');
      const user = await newUser(chat.api, 'daily');
      await plans.assign(adminPrincipal, user.id, { planId: plan.id }, at('2030-03-10T12:00:00Z'));
      await plans.runDue(at('2030-03-10T23:59:59Z'));
      await plans.runDue(at('2030-03-11T00:00:00Z'));
      await plans.runDue(at('2030-03-11T18:00:00Z'));
      expect(await planEntries(user.token)).toEqual([
        'plan Daily for 2030-03-11',
        'plan Daily for 2030-03-10',
      ]);
      await chat.api
        .put(`/api/admin/users/${user.id}/credit-plan`)
        .set(admin)
        .send({ planId: null })
        .expect(200, { plan: null, nextTopUpAt: null, balance: 140 });
      await plans.runDue(at('2030-03-20T00:00:00Z'));
      expect(await balanceOf(user.token)).toBe(140);
      await expectConsistent(user.id);
    });

    it('is assigned by an administrator over HTTP and listed with its subscribers', async () => {
      const plan = await newPlan('Silver', 50, 'month');
      const user = await newUser(chat.api, 'silver');
      const assigned = await chat.api
        .put(`/api/admin/users/${user.id}/credit-plan`)
        .set(admin)
        .send({ planId: plan.id })
        .expect(200);
      expect(assigned.body).toMatchObject({ plan: { name: 'Silver' }, balance: 150 });
      const list = await chat.api.get('/api/admin/credit-plans').set(admin).expect(200);
      expect(list.body.items).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'Silver', subscribers: 1 })]),
      );
      const [entry] = await ledgerOf(user.token);
      expect(entry).toMatchObject({ kind: 'plan', amount: 50 });
      // The users list says which plan each user is on.
      const users = await chat.api
        .get('/api/admin/users')
        .query({ search: user.username })
        .set(admin)
        .expect(200);
      expect(users.body.items).toEqual([
        expect.objectContaining({ id: user.id, plan: { id: plan.id, name: 'Silver' } }),
      ]);
      await chat.api
        .get(`/api/admin/users/${user.id}/credit-plan`)
        .set(bearer(user.token))
        .expect(403);
      await chat.api
        .put(`/api/admin/users/${user.id}/credit-plan`)
        .set(bearer(user.token))
        .send({ planId: plan.id })
        .expect(403);
    });

    it.each([
      [{ name: '', credits: 5, period: 'month' }, 'name'],
      [{ name: 'p', credits: 0, period: 'month' }, 'credits'],
      [{ name: 'p', credits: 1.5, period: 'month' }, 'credits'],
      [{ name: 'p', credits: 5, period: 'week' }, 'period'],
      [{ name: 'Gold', credits: 5, period: 'day' }, 'name'],
    ])('refuses a plan %j with 400 naming %s', async (body, field) => {
      const response = await chat.api.post('/api/admin/credit-plans').set(admin).send(body);
      expect(response.status).toBe(400);
      const named = new Set(response.body.error.fields.map((f: { field: string }) => f.field));
      expect([...named]).toEqual([field]);
    });

    it('changes a plan’s name, credits and models, but not its period', async () => {
      const plan = await newPlan('Bronze', 10, 'month');
      const changed = await chat.api
        .patch(`/api/admin/credit-plans/${plan.id}`)
        .set(admin)
        .send({ name: 'Bronze+', credits: 15, models: ['per-call', ' per-call'] })
        .expect(200);
      expect(changed.body).toMatchObject({
        id: plan.id,
        name: 'Bronze+',
        credits: 15,
        period: 'month',
        models: ['per-call'],
        disabled: false,
        subscribers: 0,
      });
      for (const [body, field] of [
        [{ period: 'day' }, 'period'],
        [{ models: ['no-such-model'] }, 'models'],
        [{ models: 'per-call' }, 'models'],
        [{ name: 'Gold' }, 'name'],
        [{ credits: -1 }, 'credits'],
        [{ disabled: 'yes' }, 'disabled'],
      ] as const) {
        const response = await chat.api
          .patch(`/api/admin/credit-plans/${plan.id}`)
          .set(admin)
          .send(body)
          .expect(400);
        expect(JSON.stringify(response.body.error)).toContain(field);
      }
      await chat.api
        .patch('/api/admin/credit-plans/999999')
        .set(admin)
        .send({ credits: 5 })
        .expect(404);
      const user = await newUser(chat.api, 'bronze');
      await chat.api
        .patch(`/api/admin/credit-plans/${plan.id}`)
        .set(bearer(user.token))
        .send({ credits: 5 })
        .expect(403);
    });

    it('stops a disabled plan: no new users, no top-ups; enabled again, from the next period', async () => {
      const plans = chat.app.get(CreditPlansService);
      const plan = await newPlan('Paused', 7, 'day');
      const user = await newUser(chat.api, 'paused');
      await plans.assign(adminPrincipal, user.id, { planId: plan.id }, at('2031-05-01T10:00:00Z'));
      await chat.api
        .patch(`/api/admin/credit-plans/${plan.id}`)
        .set(admin)
        .send({ disabled: true })
        .expect(200);
      // (Other tests' subscriptions are due too: the counts are not this plan's alone.)
      await plans.runDue(at('2031-05-03T10:00:00Z'));
      expect(await planEntries(user.token)).toEqual(['plan Paused for 2031-05-01']);
      const other = await newUser(chat.api, 'latecomer');
      const refused = await chat.api
        .put(`/api/admin/users/${other.id}/credit-plan`)
        .set(admin)
        .send({ planId: plan.id })
        .expect(400);
      expect(refused.body.error.fields[0].field).toBe('planId');
      // Enabled on 5 May: the 2nd to the 5th are not made up; the 6th is topped up.
      await plans.update(plan.id, { disabled: false }, at('2031-05-05T12:00:00Z'));
      await plans.runDue(at('2031-05-05T23:00:00Z'));
      expect(await planEntries(user.token)).toEqual(['plan Paused for 2031-05-01']);
      await plans.runDue(at('2031-05-06T00:00:00Z'));
      expect(await planEntries(user.token)).toEqual([
        'plan Paused for 2031-05-06',
        'plan Paused for 2031-05-01',
      ]);
      await expectConsistent(user.id);
    });

    it('lets its users use the models it includes, priced as usual, and only while they have it', async () => {
      await chat.api
        .post('/api/admin/models')
        .set(admin)
        .send({ name: 'plan-only', open: false, creditsPerCall: 4 })
        .expect(201);
      const plan = await newPlan('Pro', 20, 'month');
      await chat.api
        .patch(`/api/admin/credit-plans/${plan.id}`)
        .set(admin)
        .send({ models: ['plan-only'] })
        .expect(200);
      const holder = await newUser(chat.api, 'pro');
      const outsider = await newUser(chat.api, 'outsider');
      const visible = async (token: string) =>
        (
          (await chat.api.get('/api/models').set(bearer(token)).expect(200)).body.items as {
            name: string;
          }[]
        ).map((model) => model.name);
      expect(await visible(holder.token)).not.toContain('plan-only');
      await chat.api
        .post('/api/conversations')
        .set(bearer(holder.token))
        .send({ model: 'plan-only' })
        .expect(403);

      await chat.api
        .put(`/api/admin/users/${holder.id}/credit-plan`)
        .set(admin)
        .send({ planId: plan.id })
        .expect(200);
      expect(await visible(holder.token)).toContain('plan-only');
      expect(await visible(outsider.token)).not.toContain('plan-only');
      const conversationId = await newConversation(holder.token, 'plan-only');
      const reply = await sendMessage(chat, holder.token, conversationId, { content: 'hi' });
      expect(reply.events.at(-1)!.event).toBe('done');
      // Included is not free: the call's price is charged (100 + 20 - 4).
      expect(await balanceOf(holder.token)).toBe(116);
      await chat.api
        .post('/api/conversations')
        .set(bearer(outsider.token))
        .send({ model: 'plan-only' })
        .expect(403);

      // Disabled, the plan includes nothing; enabled, it does again; taken away, nothing.
      await chat.api
        .patch(`/api/admin/credit-plans/${plan.id}`)
        .set(admin)
        .send({ disabled: true })
        .expect(200);
      const refused = await sendMessage(chat, holder.token, conversationId, { content: 'again' });
      expect(refused.status).toBe(403);
      expect(await visible(holder.token)).not.toContain('plan-only');
      await chat.api
        .patch(`/api/admin/credit-plans/${plan.id}`)
        .set(admin)
        .send({ disabled: false })
        .expect(200);
      expect(await visible(holder.token)).toContain('plan-only');
      await chat.api
        .put(`/api/admin/users/${holder.id}/credit-plan`)
        .set(admin)
        .send({ planId: null })
        .expect(200);
      expect(await visible(holder.token)).not.toContain('plan-only');
      await expectConsistent(holder.id);
    });

    it('refuses an assignment of a plan that does not exist, naming planId', async () => {
      const user = await newUser(chat.api, 'noplan');
      for (const planId of [999_999, 'gold', 0]) {
        const response = await chat.api
          .put(`/api/admin/users/${user.id}/credit-plan`)
          .set(admin)
          .send({ planId });
        expect(response.status).toBe(400);
        expect(response.body.error.fields[0].field).toBe('planId');
      }
      expect(await balanceOf(user.token)).toBe(100);
    });
  });

  describe('administrator adjustments', () => {
    it('refuses to go below zero unless forced, and records who and why', async () => {
      const user = await newUser(chat.api, 'adjusted');
      const refused = await chat.api
        .post(`/api/admin/users/${user.id}/credits`)
        .set(admin)
        .send({ amount: -150, reason: 'too much' })
        .expect(409);
      expect(refused.body.error).toMatchObject({
        code: 'balance_below_zero',
        details: { balance: 100, amount: -150 },
      });
      const forced = await chat.api
        .post(`/api/admin/users/${user.id}/credits`)
        .set(admin)
        .send({ amount: -150, reason: 'chargeback', force: true })
        .expect(201);
      expect(forced.body).toMatchObject({ kind: 'adjust', amount: -150, balanceAfter: -50 });
      expect(forced.body.actorId).toEqual(expect.any(Number));
      const ledger = await chat.api
        .get(`/api/admin/users/${user.id}/credits`)
        .set(admin)
        .expect(200);
      expect(ledger.body).toMatchObject({ balance: -50, total: 2 });
      const users = await chat.api
        .get(`/api/admin/users?search=${user.username}`)
        .set(admin)
        .expect(200);
      expect(users.body.items[0]).toMatchObject({ credits: -50 });
    });

    it.each([
      [{ amount: 1.5, reason: 'x' }, 'amount'],
      [{ amount: 0, reason: 'x' }, 'amount'],
      [{ amount: 5, reason: '' }, 'reason'],
      [{ amount: 5 }, 'reason'],
      [{ amount: 2_000_000_000, reason: 'x' }, 'amount'],
    ])('refuses %p with 400 naming %s', async (body, field) => {
      const user = await newUser(chat.api, 'badadjust');
      const response = await chat.api
        .post(`/api/admin/users/${user.id}/credits`)
        .set(admin)
        .send(body)
        .expect(400);
      expect(response.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
    });

    it('answers 404 for a user that does not exist', async () => {
      await chat.api
        .post('/api/admin/users/999999/credits')
        .set(admin)
        .send({ amount: 5, reason: 'x' })
        .expect(404);
    });
  });

  describe('nobody reaches another user’s credits', () => {
    let alice: User;
    let mallory: User;

    beforeAll(async () => {
      alice = await newUser(chat.api, 'alice');
      mallory = await newUser(chat.api, 'mallory');
    });

    it('refuses the administrator routes to a user', async () => {
      for (const call of [
        chat.api.get(`/api/admin/users/${alice.id}/credits`),
        chat.api.post(`/api/admin/users/${alice.id}/credits`).send({ amount: -5, reason: 'x' }),
        chat.api.post(`/api/admin/users/${mallory.id}/credits`).send({ amount: 5, reason: 'x' }),
        chat.api.get('/api/admin/credit-codes'),
        chat.api.post('/api/admin/credit-codes').send({ credits: 5, count: 1 }),
        chat.api.put('/api/admin/chat-settings').send({ registrationGrant: 5 }),
        chat.api.post('/api/admin/credit-plans').send({ name: 'x', credits: 5, period: 'day' }),
        chat.api.patch('/api/admin/credit-plans/1').send({ disabled: true }),
      ]) {
        const response = await call.set(bearer(mallory.token));
        expect(response.status).toBe(403);
      }
    });

    it('ignores no user id smuggled into the user routes: they are refused', async () => {
      await chat.api
        .get(`/api/credits/ledger?userId=${alice.id}`)
        .set(bearer(mallory.token))
        .expect(400);
      await chat.api
        .post('/api/credits/redeem')
        .set(bearer(mallory.token))
        .send({ code: 'SY-0000-0000-0000', userId: alice.id })
        .expect(400);
      expect(await balanceOf(alice.token)).toBe(100);
      expect(await ledgerOf(alice.token)).toHaveLength(1);
    });

    it('gives each user the spend per model of their own replies only', async () => {
      const spender = await newUser(chat.api, 'spender');
      const snoop = await newUser(chat.api, 'snoop');
      const convA = await newConversation(spender.token, 'per-call');
      const convM = await newConversation(snoop.token, 'per-call');
      await sendMessage(chat, spender.token, convA, { content: 'one' });
      await sendMessage(chat, spender.token, convA, { content: 'two' });
      await sendMessage(chat, snoop.token, convM, { content: 'three' });
      const spendOf = async (token: string, search = '') =>
        (await chat.api.get(`/api/credits/spend${search}`).set(bearer(token)).expect(200)).body;
      expect(await spendOf(spender.token)).toEqual({
        days: 30,
        models: [{ model: 'per-call', spent: 20 }],
      });
      expect(await spendOf(snoop.token, '?days=7')).toEqual({
        days: 7,
        models: [{ model: 'per-call', spent: 10 }],
      });
      await chat.api
        .get(`/api/credits/spend?userId=${spender.id}`)
        .set(bearer(snoop.token))
        .expect(400);
      for (const days of ['0', '367', 'x']) {
        const response = await chat.api
          .get(`/api/credits/spend?days=${days}`)
          .set(bearer(snoop.token))
          .expect(400);
        expect(response.body.error.fields[0].field).toBe('days');
      }
      await chat.api.get('/api/credits/spend').expect(401);
    });

    it('does not let a reply be sent into another user’s conversation', async () => {
      const conversationId = await newConversation(alice.token, 'per-call');
      const reply = await sendMessage(chat, mallory.token, conversationId, { content: 'hi' });
      expect(reply.status).toBe(404);
      expect(await balanceOf(alice.token)).toBe(100);
      expect(await balanceOf(mallory.token)).toBe(100);
    });
  });

  describe('invitations', () => {
    const password = 'a-good-password';
    let invitees = 0;
    /** Registers through an invite link from `address`, and signs in. */
    const registerInvited = async (code: string, address: string) => {
      invitees += 1;
      const username = `invitee-${invitees}-${Date.now().toString(36)}`;
      const registered = await chat.api
        .post('/api/auth/register')
        .set('x-forwarded-for', address)
        .send({ username, password, invite: code });
      expect(registered.status).toBe(201);
      const id = (registered.body as { id: number }).id;
      return { id, username, token: await login(chat.api, username, password) };
    };
    const inviteOf = async (token: string) =>
      (await chat.api.get('/api/credits/invite').set(bearer(token)).expect(200)).body as {
        code: string;
        path: string;
        reward: number;
      };
    const chatOnce = async (token: string) => {
      const conversationId = await newConversation(token, 'free-chat');
      return sendMessage(chat, token, conversationId, { content: 'hello' });
    };

    it('rewards inviter and invitee once, after the invitee’s first successful reply', async () => {
      const inviter = await newUser(chat.api, 'inviter');
      const invite = await inviteOf(inviter.token);
      expect(invite).toEqual({
        code: expect.stringMatching(/^[0-9A-Z]{10}$/),
        path: `/register?invite=${invite.code}`,
        reward: 50,
      });
      expect((await inviteOf(inviter.token)).code).toBe(invite.code);
      const invitee = await registerInvited(invite.code.toLowerCase(), '203.0.113.7');
      expect(await balanceOf(invitee.token)).toBe(100);
      // A failed reply is not a successful chat.
      await mock.fault('sk-mock-a', { status: 500 }, 5);
      expect((await chatOnce(invitee.token)).events.at(-1)!.event).toBe('error');
      await mock.reset();
      expect(await balanceOf(inviter.token)).toBe(100);
      // Five first replies at once: one reward.
      const replies = await Promise.all(Array.from({ length: 5 }, () => chatOnce(invitee.token)));
      expect(replies.map((r) => r.events.at(-1)!.event)).toEqual(Array(5).fill('done'));
      expect(await balanceOf(invitee.token)).toBe(150);
      expect(await balanceOf(inviter.token)).toBe(150);
      expect(await ledgerOf(inviter.token, '&kind=invite')).toMatchObject([
        { amount: 50, reason: `user ${invitee.id} joined through your invitation` },
      ]);
      expect(await ledgerOf(invitee.token, '&kind=invite')).toHaveLength(1);
      await expectConsistent(inviter.id);
      await expectConsistent(invitee.id);
    });

    it('refuses a link that does not work before the account exists', async () => {
      const username = `badlink-${Date.now().toString(36)}`;
      const refused = await chat.api
        .post('/api/auth/register')
        .send({ username, password, invite: 'NOSUCHCODE' })
        .expect(400);
      expect(refused.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['invite']);
      await chat.api.post('/api/auth/register').send({ username, password }).expect(201);
    });

    it('rewards at most the set number of invitees from one address', async () => {
      await chat.api
        .put('/api/admin/chat-settings')
        .set(admin)
        .send({ invitesPerAddress: 2 })
        .expect(200);
      try {
        const inviter = await newUser(chat.api, 'farmer');
        const { code } = await inviteOf(inviter.token);
        const sameAddress = await Promise.all(
          [1, 2, 3].map(() => registerInvited(code, '198.51.100.9')),
        );
        await Promise.all(sameAddress.map((invitee) => chatOnce(invitee.token)));
        expect(await balanceOf(inviter.token)).toBe(200);
        const balances = await Promise.all(sameAddress.map((i) => balanceOf(i.token)));
        expect(balances.sort()).toEqual([100, 150, 150]);
        // Someone from elsewhere still counts.
        const elsewhere = await registerInvited(code, '192.0.2.44');
        await chatOnce(elsewhere.token);
        expect(await balanceOf(inviter.token)).toBe(250);
        await expectConsistent(inviter.id);
      } finally {
        await chat.api
          .put('/api/admin/chat-settings')
          .set(admin)
          .send({ invitesPerAddress: 3 })
          .expect(200);
      }
    });

    it('gives each user a link of their own', async () => {
      const [one, two] = await Promise.all([newUser(chat.api, 'link'), newUser(chat.api, 'link')]);
      const codes = await Promise.all([inviteOf(one.token), inviteOf(two.token)]);
      expect(codes[0].code).not.toBe(codes[1].code);
      await chat.api.get('/api/credits/invite').expect(401);
    });
  });

  describe('redemption codes', () => {
    const makeCodes = async (body: Record<string, unknown>) =>
      (await chat.api.post('/api/admin/credit-codes').set(admin).send(body).expect(201)).body as {
        batch: { id: number; count: number };
        codes: string[];
      };

    it('are shown once, stored hashed, and redeemed once', async () => {
      const made = await makeCodes({ credits: 50, count: 3, note: 'launch' });
      expect(made.codes).toHaveLength(3);
      expect(new Set(made.codes).size).toBe(3);
      for (const code of made.codes)
        expect(code).toMatch(/^SY-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
      const stored = await query<{ codeHash: string }>(
        process.env.DATABASE_URL!,
        'SELECT "codeHash" FROM "CreditCode" WHERE "batchId" = $1',
        [made.batch.id],
      );
      expect(stored.map((row) => row.codeHash).join()).not.toContain(made.codes[0]!.slice(3, 7));
      const list = await chat.api.get('/api/admin/credit-codes').set(admin).expect(200);
      expect(JSON.stringify(list.body)).not.toContain(made.codes[0]);

      const user = await newUser(chat.api, 'redeemer');
      const redeemed = await chat.api
        .post('/api/credits/redeem')
        .set(bearer(user.token))
        // Case, spaces and dashes do not matter.
        .send({ code: ` ${made.codes[0]!.toLowerCase().replace(/-/g, ' ')} ` })
        .expect(200);
      expect(redeemed.body).toEqual({ credits: 50, plan: null, balance: 150 });
      const again = await chat.api
        .post('/api/credits/redeem')
        .set(bearer(user.token))
        .send({ code: made.codes[0] })
        .expect(400);
      const wrong = await chat.api
        .post('/api/credits/redeem')
        .set(bearer(user.token))
        .send({ code: 'SY-AAAA-BBBB-CCCC' })
        .expect(400);
      // Used and wrong codes get the same answer: trying tells nothing.
      expect(again.body).toEqual(wrong.body);
      expect(wrong.body.error.code).toBe('code_not_redeemable');
      const batches = await chat.api.get('/api/admin/credit-codes').set(admin).expect(200);
      expect(batches.body.items[0]).toMatchObject({ id: made.batch.id, redeemed: 1, count: 3 });
      await expectConsistent(user.id);
    });

    it('refuses an expired code with the same answer', async () => {
      const made = await makeCodes({
        credits: 5,
        count: 1,
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      });
      await query(
        process.env.DATABASE_URL!,
        `UPDATE "CreditCodeBatch" SET "expiresAt" = now() - interval '1 second' WHERE "id" = $1`,
        [made.batch.id],
      );
      const user = await newUser(chat.api, 'late');
      const response = await chat.api
        .post('/api/credits/redeem')
        .set(bearer(user.token))
        .send({ code: made.codes[0] })
        .expect(400);
      expect(response.body.error.code).toBe('code_not_redeemable');
      expect(await balanceOf(user.token)).toBe(100);
    });

    it.each([
      [{ credits: 0, count: 1 }, 'credits'],
      [{ credits: 5, count: 1001 }, 'count'],
      [{ credits: 5, count: 1, expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ credits: 5, count: 1, expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt'],
    ])('refuses a batch %p with 400 naming %s', async (body, field) => {
      const response = await chat.api
        .post('/api/admin/credit-codes')
        .set(admin)
        .send(body)
        .expect(400);
      expect(response.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
    });

    it('gives a plan by code: the redeemer is put on it, a redeem entry, then plan top-ups', async () => {
      const plan = (
        await chat.api
          .post('/api/admin/credit-plans')
          .set(admin)
          .send({ name: 'Coded', credits: 40, period: 'month' })
          .expect(201)
      ).body as { id: number };
      const made = await makeCodes({ planId: plan.id, count: 2, note: 'plan launch' });
      expect(made.batch).toMatchObject({ credits: 0, planId: plan.id, planName: 'Coded' });
      const user = await newUser(chat.api, 'coded');
      const redeemed = await chat.api
        .post('/api/credits/redeem')
        .set(bearer(user.token))
        .send({ code: made.codes[0] })
        .expect(200);
      expect(redeemed.body).toEqual({ credits: 40, plan: 'Coded', balance: 140 });
      const [entry] = (await ledgerOf(user.token)) as (Entry & { reason: string })[];
      const month = new Date().toISOString().slice(0, 7);
      expect(entry).toMatchObject({
        kind: 'redeem',
        amount: 40,
        reason: `code from batch ${made.batch.id}: plan Coded for ${month}`,
      });
      const subscription = await chat.api
        .get(`/api/admin/users/${user.id}/credit-plan`)
        .set(admin)
        .expect(200);
      expect(subscription.body.plan).toMatchObject({ id: plan.id, name: 'Coded' });
      // The next top-up is the plan's own, a `plan` entry.
      await chat.app.get(CreditPlansService).runDue(new Date(subscription.body.nextTopUpAt));
      expect((await ledgerOf(user.token))[0]).toMatchObject({ kind: 'plan', amount: 40 });
      await expectConsistent(user.id);

      // A disabled plan's codes do not work, and stay unredeemed.
      await chat.api
        .patch(`/api/admin/credit-plans/${plan.id}`)
        .set(admin)
        .send({ disabled: true })
        .expect(200);
      const other = await newUser(chat.api, 'coded2');
      const refused = await chat.api
        .post('/api/credits/redeem')
        .set(bearer(other.token))
        .send({ code: made.codes[1] })
        .expect(400);
      expect(refused.body.error.code).toBe('code_not_redeemable');
      expect(await balanceOf(other.token)).toBe(100);
      const refusedBatch = await chat.api
        .post('/api/admin/credit-codes')
        .set(admin)
        .send({ planId: plan.id, count: 1 })
        .expect(400);
      expect(refusedBatch.body.error.fields[0].field).toBe('planId');
      await chat.api
        .patch(`/api/admin/credit-plans/${plan.id}`)
        .set(admin)
        .send({ disabled: false })
        .expect(200);
      await chat.api
        .post('/api/credits/redeem')
        .set(bearer(other.token))
        .send({ code: made.codes[1] })
        .expect(200);
      const batches = await chat.api.get('/api/admin/credit-codes').set(admin).expect(200);
      expect(batches.body.items[0]).toMatchObject({ id: made.batch.id, redeemed: 2 });
    });

    it.each([
      [{ credits: 5, planId: 1, count: 1 }, 'planId'],
      [{ count: 1 }, 'credits'],
      [{ planId: 999_999, count: 1 }, 'planId'],
      [{ planId: 'gold', count: 1 }, 'planId'],
    ])('refuses a plan batch %p with 400 naming %s', async (body, field) => {
      const response = await chat.api
        .post('/api/admin/credit-codes')
        .set(admin)
        .send(body)
        .expect(400);
      expect(response.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
    });

    it('limits wrong codes per user', async () => {
      const user = await newUser(chat.api, 'guesser');
      const statuses: number[] = [];
      for (let i = 0; i < 11; i += 1) {
        const response = await chat.api
          .post('/api/credits/redeem')
          .set(bearer(user.token))
          .send({ code: `SY-GUES-SXXX-${String(i).padStart(4, '0')}` });
        statuses.push(response.status);
      }
      expect(statuses).toEqual([...Array<number>(10).fill(400), 429]);
    });

    // Last: its failures fill the address's allowance.
    it('lets exactly one of fifty concurrent redemptions of one code succeed', async () => {
      const [code] = (await makeCodes({ credits: 30, count: 1 })).codes;
      const users = await Promise.all(
        Array.from({ length: 5 }, (_, i) => newUser(chat.api, `racer${i}`)),
      );
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          chat.api
            .post('/api/credits/redeem')
            .set(bearer(users[i % 5]!.token))
            .send({ code }),
        ),
      );
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s !== 200 && s !== 400 && s !== 429)).toEqual([]);
      const balances = await Promise.all(users.map((u) => balanceOf(u.token)));
      expect(balances.sort((a, b) => a - b)).toEqual([100, 100, 100, 100, 130]);
      for (const user of users) await expectConsistent(user.id);
    });

    it('lets exactly one of fifty concurrent redemptions of one plan code succeed', async () => {
      // The race above filled the address's allowance of failures: forget it (and the
      // sessions kept beside it).
      await clearRedisNamespace(process.env.REDIS_URL!, process.env.REDIS_PREFIX!);
      admin = bearer(await login(chat.api, ADMIN.username, ADMIN.password));
      const plan = (
        await chat.api
          .post('/api/admin/credit-plans')
          .set(admin)
          .send({ name: 'Raced', credits: 25, period: 'day' })
          .expect(201)
      ).body as { id: number };
      const [code] = (await makeCodes({ planId: plan.id, count: 1 })).codes;
      const users = await Promise.all(
        Array.from({ length: 5 }, (_, i) => newUser(chat.api, `planracer${i}`)),
      );
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          chat.api
            .post('/api/credits/redeem')
            .set(bearer(users[i % 5]!.token))
            .send({ code }),
        ),
      );
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s !== 200 && s !== 400 && s !== 429)).toEqual([]);
      const balances = await Promise.all(users.map((u) => balanceOf(u.token)));
      expect(balances.sort((a, b) => a - b)).toEqual([100, 100, 100, 100, 125]);
      const [subscribers] = await query<{ n: number }>(
        process.env.DATABASE_URL!,
        'SELECT count(*)::int AS n FROM "UserCreditPlan" WHERE "planId" = $1',
        [plan.id],
      );
      expect(subscribers!.n).toBe(1);
      for (const user of users) await expectConsistent(user.id);
    });
  });
});
