import { randomBytes } from 'node:crypto';
import { query, startApp, waitFor, type AppProcess } from '@switchyard/testing';
import { byStatus, recovery, request, runLoad, served, type Answered } from '../support/load.js';
import { Nginx } from '../support/nginx.js';
import { stopEach } from '../support/teardown.js';
import { freshAccount, Stack, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// Two admin replicas and two chat replicas, each pair behind an nginx balancer (as a
// Kubernetes Service is in front of their pods), the chat replicas answering through a
// gateway of their own (an edge, a router, metering, the mock provider). Under a steady load
// through both balancers (an administrator's dashboard reading the token list and the usage
// logs and creating tokens; users sending messages, each in a conversation of its own, on a
// model priced in chat credits), one admin replica is SIGKILLed, then, while a reply of
// it is streaming, one chat replica. Afterwards every request has an answer, every token
// the admin answered for exists once, and the chat credits balance: each reply is charged
// once, what its usage cost, and the freeze of a reply cut with its replica comes back
// whole from the other replica's sweeper (docs/credits.md, "Freeze and settle"). Waiting for
// the sweeper is most of the test: it returns a freeze older than CHAT_CREDIT_HOLD_MAX_MS, a
// minute at least, at its next look, once a minute; the load itself takes seconds.

type Service = 'admin' | 'chat';

interface Sent extends Answered {
  service: Service;
  step: 'token list' | 'usage logs' | 'token created' | 'conversation' | 'message';
  /** The replica that answered, from nginx (`X-Served-By`; a retried request names two). */
  servedBy: string;
  /** The name of a token created; the conversation created, or of a message. */
  key: string;
}

/** An administrator's browser: a few requests at once. */
const ADMIN_WORKERS = 3;
/** Users, each sending one message at a time. */
const CHAT_USERS = 3;
/** Steps at least; the load goes on until the last fault has had its answers. */
const STEPS = 60;
/** Answers before the first fault. */
const BEFORE_FAULTS = 40;
/** Answers of the killed service let through after its fault, a few seconds of load each. */
const AFTER_FAULT: Record<Service, number> = { admin: 150, chat: 40 };
/** The mock provider's reply takes a while, streamed, so that a kill meets replies midway. */
const UPSTREAM = { latencyMs: 150, chunkDelayMs: 40 };
const PRICE = { perCall: 0, per1kInput: 1, per1kOutput: 1 };
/** Enough credits that no message of the load is refused. */
const GRANT = 1_000_000;
/**
 * How long a freeze may stay unsettled before a chat process's sweeper returns it
 * (`CHAT_CREDIT_HOLD_MAX_MS`): the least it may be set to, far above any reply here.
 */
const HOLD_MAX_MS = 60_000;
/** Every chat process sweeps once a minute (docs/credits.md, "Freeze and settle"). */
const SWEEP_EVERY_MS = 60_000;
/** A loaded machine's late timers and slow queries, on top of the sweeper's own bound. */
const SWEEP_SLACK_MS = 30_000;
const SWEPT = 'reply never settled: freeze returned';

/** A reply's cost (docs/credits.md, "Prices"): each token part rounded up to a credit. */
function costOf(usage: Done['usage']): number {
  return (
    PRICE.perCall +
    Math.ceil((usage.promptTokens * PRICE.per1kInput) / 1000) +
    Math.ceil((usage.completionTokens * PRICE.per1kOutput) / 1000)
  );
}

const hostOf = (app: AppProcess) => new URL(app.url).host;

interface Done {
  messageId: number;
  usage: { promptTokens: number; completionTokens: number };
}

/** The `done` event of a streamed reply: null when the stream did not end with one. */
function doneOf(body: string): Done | null {
  const done = /^event: done\ndata: (.*)$/m.exec(body);
  return done ? (JSON.parse(done[1]!) as Done) : null;
}

describe('scale: two admin and two chat replicas behind nginx, one of each killed under load', () => {
  const first = { username: 'owner', password: `first-${randomBytes(6).toString('hex')}` };
  const chatAdmin = { username: 'chatadmin', password: `pw-${randomBytes(6).toString('hex')}` };
  const stack = new Stack({ metering: true, admin: first, adminReplicas: 2 });
  const chats: AppProcess[] = [];
  let adminProxy: Nginx | undefined;
  let chatProxy: Nginx | undefined;

  beforeAll(async () => {
    await stack.start();
    // One after the other: the first to start makes the chat's first administrator.
    for (let i = 0; i < 2; i += 1) {
      chats.push(
        await startApp('chat', {
          env: {
            ...stack.env,
            CHAT_ADMIN_USERNAME: chatAdmin.username,
            CHAT_ADMIN_PASSWORD: chatAdmin.password,
            CHAT_CREDIT_HOLD_MAX_MS: String(HOLD_MAX_MS),
          },
          readyPath: '/readyz',
        }),
      );
    }
    adminProxy = Nginx.balancer(stack.admins.map((admin) => admin.url));
    chatProxy = Nginx.balancer(chats.map((chat) => chat.url));
    await Promise.all([adminProxy.start(), chatProxy.start()]);
  }, STACK_START_TIMEOUT_MS);

  afterAll(() =>
    stopEach(
      () => adminProxy?.stop(),
      () => chatProxy?.stop(),
      () => Promise.all(chats.map((chat) => chat.stop())),
      () => stack.stop(),
    ),
  );

  it('an admin and a chat replica die under load: every request answered, every token written once, every reply charged once', async () => {
    const admins = stack.admins;
    const adminUrl = adminProxy!.url;
    const chatUrl = chatProxy!.url;
    const json = (method: string, session: string, body?: unknown): RequestInit => ({
      method,
      headers: {
        ...(session ? { authorization: `Bearer ${session}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const ok = async (url: string, init: RequestInit): Promise<Record<string, unknown>> => {
      const answer = await request(url, init);
      if (!served(answer))
        throw new Error(`${init.method} ${url}: ${answer.status} ${answer.body}`);
      return (answer.body ? JSON.parse(answer.body) : {}) as Record<string, unknown>;
    };

    // The administrator, through the admin balancer: the first sign-in must change the password.
    const password = `changed-${randomBytes(6).toString('hex')}`;
    const firstSession = (await ok(`${adminUrl}/api/auth/login`, json('POST', '', first))).token;
    await ok(
      `${adminUrl}/api/auth/password`,
      json('POST', String(firstSession), {
        currentPassword: first.password,
        newPassword: password,
      }),
    );
    const adminSession = String(
      (await ok(`${adminUrl}/api/auth/login`, json('POST', '', { ...first, password }))).token,
    );

    // The chat's gateway: a token of the edge on a channel of the mock provider.
    const model = uniqueName('m');
    const account = await freshAccount(stack);
    await stack.createChannel({ models: [model], keys: [account] });
    await stack.mockFault({ key: account, ...UPSTREAM });
    const token = await stack.createToken();
    await stack.routable(token.key, model);

    // The chat, through the chat balancer: its API key record, the priced model, the users.
    const chatAdminSession = String(
      (await ok(`${chatUrl}/api/auth/login`, json('POST', '', chatAdmin))).token,
    );
    await ok(
      `${chatUrl}/api/admin/api-keys`,
      json('POST', chatAdminSession, { address: stack.edge.url, key: token.key, purpose: 'chat' }),
    );
    await ok(
      `${chatUrl}/api/admin/models`,
      json('POST', chatAdminSession, {
        name: model,
        open: true,
        creditsPerCall: PRICE.perCall,
        creditsPer1kInput: PRICE.per1kInput,
        creditsPer1kOutput: PRICE.per1kOutput,
      }),
    );
    await ok(
      `${chatUrl}/api/admin/chat-settings`,
      json('PUT', chatAdminSession, { registrationGrant: GRANT }),
    );
    const users: { id: number; session: string }[] = [];
    for (let i = 0; i < CHAT_USERS; i += 1) {
      const credentials = { username: uniqueName('user'), password: 'a-good-password' };
      const profile = await ok(`${chatUrl}/api/auth/register`, json('POST', '', credentials));
      const login = await ok(`${chatUrl}/api/auth/login`, json('POST', '', credentials));
      users.push({ id: Number(profile.id), session: String(login.token) });
    }

    // Replies streaming, by the replica sending them: the chat replica dies during one.
    const streaming = new Map<string, number>();
    /** Answers in, by service: after its fault, the load goes on for some of its own. */
    const tally: Record<Service, number> = { admin: 0, chat: 0 };
    const send = async (
      service: Service,
      step: Sent['step'],
      url: string,
      init: RequestInit,
      key = '',
    ): Promise<Sent> => {
      let servedBy = '';
      let stream = false;
      const answer = await request(url, init, {
        onHeaders: (response) => {
          servedBy = response.headers.get('x-served-by') ?? '';
          stream = response.headers.get('content-type')?.startsWith('text/event-stream') ?? false;
          if (stream) streaming.set(servedBy, (streaming.get(servedBy) ?? 0) + 1);
        },
      }).finally(() => {
        if (stream) streaming.set(servedBy, streaming.get(servedBy)! - 1);
      });
      tally[service] += 1;
      return { ...answer, service, step, servedBy, key };
    };
    const admin = async (step: Sent['step'], method: string, path: string, body?: unknown) => {
      const key = step === 'token created' ? String((body as { name: string }).name) : '';
      return [
        await send('admin', step, `${adminUrl}/api${path}`, json(method, adminSession, body), key),
      ];
    };
    const adminStep = (index: number): Promise<Sent[]> => {
      if (index % 3 === 1) return admin('token list', 'GET', '/tokens?pageSize=20');
      if (index % 3 === 2) return admin('usage logs', 'GET', '/usage/logs?pageSize=20');
      return admin('token created', 'POST', '/tokens', {
        name: uniqueName('load-token'),
        expiresAt: null,
        quota: null,
      });
    };
    /** A user starts a conversation and sends its first message. */
    const chatStep = async (index: number, user: (typeof users)[number]): Promise<Sent[]> => {
      const post = (step: Sent['step'], path: string, body: unknown, key = '') =>
        send(
          'chat',
          step,
          `${chatUrl}/api/conversations${path}`,
          json('POST', user.session, body),
          key,
        );
      const conversation = await post('conversation', '', { model });
      if (!served(conversation)) return [conversation];
      const id = String((JSON.parse(conversation.body) as { id: string }).id);
      return [
        { ...conversation, key: id },
        await post('message', `/${id}/messages`, { content: `message ${index}` }, id),
      ];
    };
    // Each user once before the load: the model, its price and the gateway answer.
    const warmUps = (await Promise.all(users.map((user, i) => chatStep(-1 - i, user)))).flat();
    for (const warmUp of warmUps.filter((a) => a.step === 'message'))
      expect(doneOf(warmUp.body)).not.toBeNull();

    const faults: { name: string; service: Service; at: number }[] = [];
    let chatKilledAt = 0;
    /** Kills the replica, then lets AFTER_FAULT answers of its service through. */
    const fault = async (name: string, service: Service, replica: AppProcess) => {
      const at = performance.now();
      faults.push({ name, service, at });
      await replica.stop('SIGKILL');
      const before = tally[service];
      await waitFor(() => tally[service] >= before + AFTER_FAULT[service] || undefined, {
        what: `${AFTER_FAULT[service]} ${service} answers after: ${name}`,
        timeoutMs: 60_000,
      });
    };
    const answers = await runLoad<Sent>({
      requests: STEPS,
      concurrency: ADMIN_WORKERS + CHAT_USERS,
      send: (index, worker) =>
        worker < ADMIN_WORKERS ? adminStep(index) : chatStep(index, users[worker - ADMIN_WORKERS]!),
      midway: {
        after: BEFORE_FAULTS,
        run: async () => {
          await fault('admin replica SIGKILL', 'admin', admins[0]!);
          await waitFor(() => (streaming.get(hostOf(chats[0]!)) ?? 0) > 0 || undefined, {
            what: 'a reply streaming from the first chat replica',
            intervalMs: 5,
          });
          chatKilledAt = performance.now();
          await fault('chat replica SIGKILL (a reply streaming)', 'chat', chats[0]!);
        },
      },
    });
    const of = (service: Service) => answers.filter((a) => a.service === service);
    expect(faults).toHaveLength(2);

    // Every request has an answer: served, or cut in flight on the replica that died (nginx's
    // 502 before the answer began, a stream broken off after), never anything else.
    for (const service of ['admin', 'chat'] as const) {
      const killed = hostOf(service === 'admin' ? admins[0]! : chats[0]!);
      const failed = of(service).filter((a) => !served(a));
      for (const answer of failed) {
        expect([502, 503, 0]).toContain(answer.status);
        expect(answer.servedBy).toBe(killed);
      }
      expect(failed.length).toBeLessThanOrEqual(service === 'admin' ? ADMIN_WORKERS : CHAT_USERS);
    }
    // A stream broken off is a reply that had begun; a reply that ended ended with `done`.
    const messages = answers.filter((a) => a.step === 'message');
    for (const cut of messages.filter((a) => a.status === 0))
      expect(cut.contentType).toMatch(/^text\/event-stream/);
    for (const message of messages.filter(served)) expect(doneOf(message.body)).not.toBeNull();

    // Each token the admin answered 2xx for is there exactly once; one whose creation was cut
    // in flight may be there, once at most.
    const creations = answers.filter((a) => a.step === 'token created');
    const rows = await query<{ name: string; n: number }>(
      stack.databaseUrl,
      'SELECT name, count(*)::int AS n FROM "Token" WHERE name = ANY($1) GROUP BY name',
      [creations.map((a) => a.key)],
    );
    const stored = new Map(rows.map((row) => [row.name, row.n]));
    const created = creations.filter(served).map((a) => a.key);
    expect(created.map((name) => [name, stored.get(name)])).toEqual(
      created.map((name) => [name, 1]),
    );
    for (const name of creations.map((a) => a.key)) expect(stored.get(name) ?? 0).toBeLessThan(2);
    // Each conversation answered 201 is there.
    const conversations = [...warmUps, ...answers].filter((a) => a.step === 'conversation');
    const [conversationRows] = await query<{ n: number }>(
      stack.databaseUrl,
      'SELECT count(*)::int AS n FROM "Conversation" WHERE id = ANY($1::uuid[])',
      [conversations.filter(served).map((a) => a.key)],
    );
    expect(conversationRows!.n).toBe(conversations.filter(served).length);

    // The freezes of replies cut with their replica are held until the other replica's
    // sweeper returns them: within the bound plus a sweep from the kill.
    const heldAfterLoad = await holds(stack);
    expect(heldAfterLoad).toBeGreaterThan(0);
    const sweepBound = chatKilledAt + HOLD_MAX_MS + SWEEP_EVERY_MS + SWEEP_SLACK_MS;
    await waitFor(async () => (await holds(stack)) === 0 || undefined, {
      timeoutMs: Math.max(0, sweepBound - performance.now()),
      intervalMs: 500,
      what: `the sweeper to return the ${heldAfterLoad} freezes held`,
    });
    const sweptAfterMs = Math.round(performance.now() - chatKilledAt);

    // The books: each balance is the sum of its ledger, and each reply is one freeze and one
    // settlement. A reply that ended cost what its usage costs, unless its replica died
    // before settling it (then it was swept); a reply cut cost nothing.
    const ledger = await query<{
      requestId: string;
      conversationId: string;
      kind: string;
      amount: number;
      reason: string;
    }>(
      stack.databaseUrl,
      `SELECT "requestId", "conversationId"::text AS "conversationId", kind, amount, reason
         FROM "CreditEntry" WHERE "requestId" IS NOT NULL ORDER BY id`,
    );
    for (const user of users) {
      const [books] = await query<{ credits: number; sum: number; lowest: number }>(
        stack.databaseUrl,
        `SELECT u.credits, sum(e.amount)::int AS sum, min(e."balanceAfter")::int AS lowest
           FROM "ChatUser" u JOIN "CreditEntry" e ON e."userId" = u.id
          WHERE u.id = $1 GROUP BY u.id`,
        [user.id],
      );
      expect(books!.credits).toBe(books!.sum);
      expect(books!.lowest).toBeGreaterThanOrEqual(0);
    }
    const entriesOf = (conversationId: string) =>
      ledger.filter((entry) => entry.conversationId === conversationId);
    let frozen = 0;
    let swept = 0;
    let charged = 0;
    for (const message of [...warmUps, ...messages].filter((a) => a.step === 'message')) {
      const entries = entriesOf(message.key);
      const done = served(message) ? doneOf(message.body) : null;
      if (entries.length === 0) {
        // Cut before its freeze was made.
        expect(done).toBeNull();
        continue;
      }
      frozen += 1;
      expect(entries.map((e) => e.kind)).toEqual(['spend', 'refund']);
      expect(entries[1]!.requestId).toBe(entries[0]!.requestId);
      const net = entries[0]!.amount + entries[1]!.amount;
      if (entries[1]!.reason === SWEPT) {
        expect(message.servedBy).toBe(hostOf(chats[0]!));
        expect(net).toBe(0);
        swept += 1;
      } else {
        // Charged: the reply ended and was saved. Its `done` event goes out once it is
        // settled (docs/credits.md, "Freeze and settle"), so a replica killed in between
        // leaves its client without one; the saved reply then says what it cost.
        if (!done) expect(message.servedBy).toBe(hostOf(chats[0]!));
        const usage = done?.usage ?? (await savedReplyUsage(stack, message.key));
        expect(-net).toBe(costOf(usage));
        charged -= net;
      }
    }
    // Every freeze of the ledger belongs to one of the messages above, and only one.
    expect(ledger.filter((entry) => entry.kind === 'spend')).toHaveLength(frozen);
    expect(swept).toBe(heldAfterLoad);
    // Each reply that ended was saved.
    const doneIds = messages.map((a) => doneOf(a.body)?.messageId).filter((id) => id !== undefined);
    const [savedReplies] = await query<{ n: number }>(
      stack.databaseUrl,
      `SELECT count(*)::int AS n FROM "Message"
        WHERE id = ANY($1::bigint[]) AND role = 'assistant' AND status = 'complete'`,
      [doneIds.map(String)],
    );
    expect(savedReplies!.n).toBe(doneIds.length);

    const line = (service: Service) =>
      `${service}: ${of(service).length} answers through nginx, statuses ${JSON.stringify(byStatus(of(service)))}`;
    process.stdout.write(
      [
        '',
        `admin and chat replicas under load: ${ADMIN_WORKERS} admin requests and ${CHAT_USERS} users at once`,
        `  ${line('admin')}; ${creations.filter(served).length} tokens created, each stored once`,
        `  ${line('chat')}; ${messages.filter(served).length} replies charged ${charged} credits in all, each its usage's cost`,
        // Each service has one fault, so its failed answers are all that fault's; those of
        // them that ended after a request sent after the kill was served count in all only.
        ...faults.map(({ name, service, at }) => {
          const { recoveredMs, failed } = recovery(of(service), at);
          const all = byStatus(of(service).filter((a) => !served(a)));
          return `  ${name}: failed ${JSON.stringify(all)} in all, ${JSON.stringify(failed)} before recovery; first ${service} request sent after it served ${recoveredMs} ms after`;
        }),
        `  ${heldAfterLoad} freezes of cut replies held after the load, returned whole by the sweeper ${sweptAfterMs} ms after the chat replica died`,
        '',
      ].join('\n'),
    );
  }, 300_000);
});

/** The usage of a conversation's one reply, as saved complete. */
async function savedReplyUsage(stack: Stack, conversationId: string): Promise<Done['usage']> {
  const replies = await query<Done['usage']>(
    stack.databaseUrl,
    `SELECT "promptTokens", "completionTokens" FROM "Message"
      WHERE "conversationId" = $1::uuid AND role = 'assistant' AND status = 'complete'`,
    [conversationId],
  );
  expect(replies).toHaveLength(1);
  return replies[0]!;
}

async function holds(stack: Stack): Promise<number> {
  const [row] = await query<{ n: number }>(
    stack.databaseUrl,
    'SELECT count(*)::int AS n FROM "CreditHold"',
  );
  return row!.n;
}
