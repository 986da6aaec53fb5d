import { createServer, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Events } from '@switchyard/contracts';
import { verifyWebhookSignature } from '@switchyard/security';
import { query, waitFor } from '@switchyard/testing';
import { Redis } from 'ioredis';
import { chat } from '../support/load.js';
import { freshAccount, Stack, STACK_START_TIMEOUT_MS, uniqueName } from '../support/stack.js';

// Budgets end to end (docs/budgets.md): real edges, router and metering over Postgres and
// Redis. Each level refuses at its cap with budget_exceeded, naming itself and its reset;
// a period resets when the edges' clock passes its end (TEST_CLOCK_FILE, moved forward
// only, never slept for); a soft alert fires once per period, audited and POSTed signed.

/**
 * A tenth of a micro-dollar a prompt token, ten a completion token: the worst case (every
 * byte of the body a prompt token, MAX_TOKENS out) is then a small multiple of what an
 * answer costs, so a budget of a few answers admits a few requests at once.
 */
const INPUT_PRICE = 100_000;
const OUTPUT_PRICE = 10_000_000;
const MAX_TOKENS = 16;
const WEBHOOK_SECRET = 'budget-webhook-secret-for-tests';

interface Delivery {
  body: string;
  signature: string | undefined;
}

/** A webhook receiver on loopback: keeps what it was sent. */
async function startReceiver(): Promise<{ server: Server; url: string; received: Delivery[] }> {
  const received: Delivery[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({
        body: Buffer.concat(chunks).toString('utf8'),
        signature: request.headers['x-switchyard-signature'] as string | undefined,
      });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${address.port}/hooks/budget`, received };
}

describe('gateway + metering: budgets', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let clockDir: string;
  let clockFile: string;
  /** What the edges' clock is ahead of the wall clock. */
  let offsetMs = 0;
  let stack: Stack;
  let model: string;
  let slowModel: string;

  beforeAll(async () => {
    receiver = await startReceiver();
    clockDir = await mkdtemp(path.join(tmpdir(), 'sy-clock-'));
    clockFile = path.join(clockDir, 'offset');
    stack = new Stack({
      edges: 2,
      metering: true,
      env: { BUDGET_WEBHOOK_URL: receiver.url, BUDGET_WEBHOOK_SECRET: WEBHOOK_SECRET },
      edgeEnv: { TEST_CLOCK_FILE: clockFile },
    });
    await stack.start();
    model = await pricedModel(0);
    slowModel = await pricedModel(1_000);
  }, STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await stack?.stop();
    receiver?.server.close();
    if (clockDir) await rm(clockDir, { recursive: true, force: true });
  });

  /** A model priced at PRICE, served by a fresh mock account whose answers take `latencyMs`. */
  async function pricedModel(latencyMs: number): Promise<string> {
    const name = uniqueName('budgeted');
    await query(
      stack.databaseUrl,
      `INSERT INTO "ModelPrice" (model, "inputPrice", "outputPrice", "updatedAt") VALUES ($1, $2, $3, now())`,
      [name, INPUT_PRICE, OUTPUT_PRICE],
    );
    await stack.publish(Events.PriceChanged, { model: name });
    const account = await freshAccount(stack);
    await stack.createChannel({ models: [name], keys: [account] });
    if (latencyMs > 0) await stack.mockFault({ key: account, latencyMs });
    return name;
  }

  /** Moves every edge's clock forward (never back: holds are aged by it). */
  async function moveClock(byMs: number): Promise<void> {
    offsetMs += byMs;
    await writeFile(clockFile, String(offsetMs));
  }
  const now = () => Date.now() + offsetMs;
  const nextUtcMidnight = (at: number) => {
    const day = new Date(at);
    return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + 1);
  };

  async function createTeam(billing: 'budget' | 'balance' = 'budget'): Promise<number> {
    const [team] = await query<{ id: number }>(
      stack.databaseUrl,
      `INSERT INTO "Team" (name, billing, "updatedAt") VALUES ($1, $2, now()) RETURNING id`,
      [uniqueName('team'), billing],
    );
    return team!.id;
  }

  async function createMember(teamId: number): Promise<number> {
    const [user] = await query<{ id: number }>(
      stack.databaseUrl,
      `INSERT INTO "AdminUser" (username, "passwordHash", role, "updatedAt") VALUES ($1, 'x', 'member', now()) RETURNING id`,
      [uniqueName('member')],
    );
    await query(
      stack.databaseUrl,
      `INSERT INTO "TeamMember" ("teamId", "userId") VALUES ($1, $2)`,
      [teamId, user!.id],
    );
    return user!.id;
  }

  /** A token of a team (and member), announced as the admin service would. */
  async function teamToken(
    teamId: number | null,
    ownerId: number | null = null,
  ): Promise<{ id: number; key: string }> {
    const token = await stack.createToken();
    await query(
      stack.databaseUrl,
      `UPDATE "Token" SET "teamId" = $2, "ownerId" = $3 WHERE id = $1`,
      [token.id, teamId, ownerId],
    );
    await stack.publish(Events.TokenChanged, {
      tokenId: token.id,
      keyHash: token.keyHash,
      action: 'updated',
    });
    return token;
  }

  async function setBudget(
    subject: string,
    amount: number,
    period: 'none' | 'day' | 'week' | 'month',
    softPercent: number | null = null,
  ): Promise<number> {
    const level = subject.split(':', 1)[0];
    const [budget] = await query<{ id: number }>(
      stack.databaseUrl,
      `INSERT INTO "Budget" (subject, level, amount, period, "softPercent", "updatedAt")
       VALUES ($1, $2::"BudgetLevel", $3, $4::"BudgetPeriod", $5, now())
       ON CONFLICT (subject) DO UPDATE SET amount = $3, period = $4::"BudgetPeriod", "softPercent" = $5
       RETURNING id`,
      [subject, level, amount, period, softPercent],
    );
    await stack.publish(Events.BudgetChanged, { subject, action: 'updated' });
    return budget!.id;
  }

  async function dropBudget(subject: string): Promise<void> {
    await query(stack.databaseUrl, `DELETE FROM "Budget" WHERE subject = $1`, [subject]);
    await stack.publish(Events.BudgetChanged, { subject, action: 'deleted' });
  }

  const body = (text = 'spend some budget', stream = false, chosen = model) => ({
    model: chosen,
    max_tokens: MAX_TOKENS,
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
    messages: [{ role: 'user', content: text }],
  });
  /** The edge's worst case for a body (docs/architecture.md, "Spend holds"). */
  const reservation = (sent: object) =>
    Math.ceil(
      (Buffer.byteLength(JSON.stringify(sent)) * INPUT_PRICE + MAX_TOKENS * OUTPUT_PRICE) / 1e6,
    );

  async function ask(
    key: string,
    sent: object = body(),
    edge = stack.edge,
  ): Promise<{
    status: number;
    body: { error?: { code: string; message: string; type: string } };
    retryAfter: string | null;
  }> {
    const response = await fetch(`${edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(sent),
    });
    return {
      status: response.status,
      body: (await response.json().catch(() => ({}))) as never,
      retryAfter: response.headers.get('retry-after'),
    };
  }

  async function spentOf(subject: string): Promise<number> {
    const rows = await query<{ spent: string }>(
      stack.databaseUrl,
      `SELECT coalesce(sum(spent), 0)::text AS spent FROM "BudgetSpend" WHERE subject = $1`,
      [subject],
    );
    return Number(rows[0]!.spent);
  }

  async function billedTo(tokenIds: number[]): Promise<{ rows: number; cost: number }> {
    const [row] = await query<{ rows: string; cost: string }>(
      stack.databaseUrl,
      `SELECT count(*)::text AS rows, coalesce(sum(cost), 0)::text AS cost FROM "UsageLog" WHERE "tokenId" = ANY($1::int[])`,
      [tokenIds],
    );
    return { rows: Number(row!.rows), cost: Number(row!.cost) };
  }

  /** Waits until metering has logged `count` requests of the tokens. */
  async function metered(tokenIds: number[], count: number): Promise<void> {
    await waitFor(async () => ((await billedTo(tokenIds)).rows >= count ? true : undefined), {
      what: `${count} usage rows`,
    });
  }

  /** What one answer to `sent` costs, from a request alone by a token no budget covers. */
  async function costOfOne(sent: object): Promise<number> {
    const probe = await teamToken(null);
    await stack.routable(probe.key, (sent as { model: string }).model);
    expect((await chat(stack.edge.url, probe.key, sent as Record<string, unknown>)).status).toBe(
      200,
    );
    await metered([probe.id], 1);
    return (await billedTo([probe.id])).cost;
  }

  async function maxCostOf(tokenIds: number[]): Promise<number> {
    const [row] = await query<{ cost: string }>(
      stack.databaseUrl,
      `SELECT coalesce(max(cost), 0)::text AS cost FROM "UsageLog" WHERE "tokenId" = ANY($1::int[])`,
      [tokenIds],
    );
    return Number(row!.cost);
  }

  /** What requests in flight hold on an account (libs/spend). */
  async function heldOn(account: string): Promise<number> {
    const redis = new Redis(stack.redisUrl);
    try {
      return Number((await redis.hget(`${stack.prefix}:spend:{${account}}:h`, '#held')) ?? 0);
    } finally {
      redis.disconnect();
    }
  }

  const cases = [
    { level: 'token', names: "This token's budget" },
    { level: 'member', names: "Your budget in this token's team" },
    { level: 'team', names: "This token's team budget" },
    { level: 'gateway', names: "The gateway's budget" },
  ] as const;

  it.each(cases)(
    'refuses at the $level budget with budget_exceeded, its reset and Retry-After',
    async ({ level, names }) => {
      const teamId = await createTeam();
      const ownerId = await createMember(teamId);
      const token = await teamToken(teamId, ownerId);
      const subject =
        level === 'token'
          ? `token:${token.id}`
          : level === 'member'
            ? `member:${teamId}:${ownerId}`
            : level === 'team'
              ? `team:${teamId}`
              : 'gateway';
      // One micro-dollar: the first request holds what is left and runs over (the partial
      // hold, docs/architecture.md "Spend holds"); the next finds nothing left.
      await setBudget(subject, 1, 'day');
      try {
        await stack.routable(token.key, model);
        expect((await ask(token.key)).status).toBe(200);
        await metered([token.id], 1);
        const spent = await waitFor(async () => (await spentOf(subject)) || undefined, {
          what: `${subject} spend`,
        });
        expect(spent).toBe((await billedTo([token.id])).cost);

        const refused = await ask(token.key, body(), stack.edges[1]);
        const resetsAt = nextUtcMidnight(now());
        expect(refused.status).toBe(429);
        expect(refused.body.error).toMatchObject({
          code: 'budget_exceeded',
          type: 'insufficient_quota',
        });
        expect(refused.body.error!.message).toContain(
          `${names} (${subject}, 1 micro-dollars a day)`,
        );
        expect(refused.body.error!.message).toContain(
          `It resets at ${new Date(resetsAt).toISOString()}`,
        );
        const retryAfter = Number(refused.retryAfter);
        expect(Math.abs(retryAfter - (resetsAt - now()) / 1000)).toBeLessThan(30);
        // Refused requests hold nothing and are logged at no cost.
        await metered([token.id], 2);
        expect(await heldOn(`budget:${subject}@${resetsAt - 86_400_000}`)).toBe(0);
      } finally {
        if (level === 'gateway') await dropBudget(subject);
      }
    },
    60_000,
  );

  it('serves again once the period has reset, counting the new period from zero', async () => {
    const teamId = await createTeam();
    const token = await teamToken(teamId);
    const subject = `team:${teamId}`;
    await setBudget(subject, 1, 'day');
    await stack.routable(token.key, model);
    expect((await ask(token.key)).status).toBe(200);
    await metered([token.id], 1);
    expect((await ask(token.key)).status).toBe(429);

    // To a minute past the next midnight (UTC, the default BUDGET_TIME_ZONE).
    const midnight = nextUtcMidnight(now());
    await moveClock(midnight + 60_000 - now());
    expect((await ask(token.key)).status).toBe(200);
    await metered([token.id], 3);
    const periods = await query<{ periodStart: Date; spent: string }>(
      stack.databaseUrl,
      `SELECT "periodStart", spent::text AS spent FROM "BudgetSpend" WHERE subject = $1 ORDER BY "periodStart"`,
      [subject],
    );
    expect(periods.map((p) => p.periodStart.getTime())).toEqual([midnight - 86_400_000, midnight]);
    expect(Number(periods[1]!.spent)).toBeGreaterThan(0);
    expect(Number(periods[0]!.spent) + Number(periods[1]!.spent)).toBe(
      (await billedTo([token.id])).cost,
    );
    expect((await ask(token.key)).status).toBe(429);
  }, 60_000);

  it('fires a soft alert once per period: audited, and POSTed with a verifiable signature', async () => {
    const teamId = await createTeam();
    const tokens = await Promise.all([teamToken(teamId), teamToken(teamId)]);
    const ids = tokens.map((t) => t.id);
    const subject = `team:${teamId}`;
    const oneCost = await costOfOne(body('alert 0'));
    const budgetId = await setBudget(subject, 6 * oneCost, 'day', 50);
    for (const token of tokens) await stack.routable(token.key, model);
    let sent = 0;
    /** Four requests at once, through both edges; resolves once metering has them all. */
    const burst = async () => {
      await Promise.all(
        Array.from({ length: 4 }, (_, i) =>
          ask(tokens[i % 2]!.key, body(`alert ${i}`), stack.edges[i % 2]),
        ),
      );
      sent += 4;
      await metered(ids, sent);
    };
    const alertsOf = async () =>
      (
        await query<{ details: { periodStart: string } }>(
          stack.databaseUrl,
          `SELECT details FROM "AuditLog" WHERE action = 'budget.soft_alert' AND "targetId" = $1 ORDER BY id`,
          [String(budgetId)],
        )
      ).map((row) => row.details.periodStart);
    const deliveries = () =>
      receiver.received
        .map((delivery) => ({
          ...delivery,
          alert: JSON.parse(delivery.body) as Record<string, unknown>,
        }))
        .filter((d) => d.alert.budgetId === budgetId);
    /** Bursts until the period's spend has crossed half the budget. */
    const crossHalf = async (periodStart: number) => {
      for (let i = 0; i < 8; i += 1) {
        const [row] = await query<{ spent: string }>(
          stack.databaseUrl,
          `SELECT spent::text FROM "BudgetSpend" WHERE subject = $1 AND "periodStart" = $2`,
          [subject, new Date(periodStart)],
        );
        if (row && Number(row.spent) * 2 >= 6 * oneCost) return;
        await burst();
      }
      throw new Error('the budget never reached its soft threshold');
    };

    const firstPeriod = nextUtcMidnight(now()) - 86_400_000;
    await crossHalf(firstPeriod);
    await waitFor(() => (deliveries().length > 0 ? true : undefined), { what: 'the webhook' });
    // More settlements past the threshold in the same period fire nothing more.
    await burst();
    await burst();
    expect(await alertsOf()).toEqual([new Date(firstPeriod).toISOString()]);
    expect(deliveries()).toHaveLength(1);
    const [delivery] = deliveries();
    expect(verifyWebhookSignature(WEBHOOK_SECRET, delivery!.body, delivery!.signature)).toBe(true);
    expect(
      verifyWebhookSignature('another secret entirely', delivery!.body, delivery!.signature),
    ).toBe(false);
    expect(delivery!.alert).toMatchObject({
      event: 'budget.soft_threshold',
      subject,
      level: 'team',
      amount: String(6 * oneCost),
      softPercent: 50,
      period: 'day',
      periodStart: new Date(firstPeriod).toISOString(),
      periodEnd: new Date(firstPeriod + 86_400_000).toISOString(),
    });
    expect(Number(delivery!.alert.spent) * 2).toBeGreaterThanOrEqual(6 * oneCost);

    // The next day is a new period: one alert more.
    await moveClock(nextUtcMidnight(now()) + 60_000 - now());
    await crossHalf(firstPeriod + 86_400_000);
    await waitFor(() => (deliveries().length === 2 ? true : undefined), {
      what: 'the second alert',
    });
    await burst();
    expect(await alertsOf()).toHaveLength(2);
    expect(deliveries()).toHaveLength(2);
  }, 60_000);

  it('holds 64 parallel streams across two edges to a team budget worth about 20 requests', async () => {
    const teamId = await createTeam();
    const tokens = await Promise.all(Array.from({ length: 4 }, () => teamToken(teamId)));
    const ids = tokens.map((t) => t.id);
    const subject = `team:${teamId}`;
    const sent = (i: number) => body(`parallel ${String(i).padStart(2, '0')}`, true, slowModel);
    const worst = Math.max(...Array.from({ length: 64 }, (_, i) => reservation(sent(i))));
    const amount = 20 * (await costOfOne(sent(0)));
    await setBudget(subject, amount, 'month');
    for (const token of tokens) await stack.routable(token.key, slowModel);

    // Every answer takes a second: the 64 requests of a wave are all in flight together.
    // Waves follow each other, each once the last is settled, until one is served nothing.
    let sentCount = 0;
    const waves: number[] = [];
    const at = new Date(now());
    const account = `budget:${subject}@${Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)}`;
    const nothingHeld = () =>
      waitFor(async () => ((await heldOn(account)) === 0 ? true : undefined), {
        what: 'every hold settled',
      });
    for (let wave = 0; wave < 12; wave += 1) {
      await nothingHeld();
      const answers = await Promise.all(
        Array.from({ length: 64 }, (_, i) =>
          chat(stack.edges[i % 2]!.url, tokens[i % tokens.length]!.key, sent(i)),
        ),
      );
      sentCount += 64;
      await metered(ids, sentCount);
      const served = answers.filter((a) => a.status === 200);
      waves.push(served.length);
      for (const answer of answers.filter((a) => a.status !== 200)) {
        expect(answer.status).toBe(429);
        expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'budget_exceeded' } });
      }
      if (served.length === 0) break;
    }
    const spent = await spentOf(subject);
    const { cost } = await billedTo(ids);
    const dearest = await maxCostOf(ids);
    process.stdout.write(
      `team budget ${amount}: served per wave of 64 ${JSON.stringify(waves)}, spent ${spent} (one reservation ${worst}, dearest answer ${dearest})\n`,
    );
    expect(spent).toBe(cost);
    expect(waves[0]).toBeGreaterThan(0);
    expect(waves[0]).toBeLessThan(64);
    expect(waves.at(-1)).toBe(0);
    // Spent to its end: a wave is refused whole only once nothing is left.
    expect(spent).toBeGreaterThanOrEqual(amount);
    // The bound: every hold but the one partial hold covered its request's cost, so the
    // spend passes the budget by at most what the partial one cost beyond what it held
    // (at least a micro-dollar), short of one reservation.
    expect(spent).toBeLessThan(amount + dearest);
    expect(dearest).toBeLessThanOrEqual(worst);
    await nothingHeld();
  }, 60_000);

  it('keeps a balance equal to its ledger through random credits and requests, and refuses it empty', async () => {
    const teamId = await createTeam('balance');
    const tokens = await Promise.all([teamToken(teamId), teamToken(teamId)]);
    /** An administrator's credit, as the admin service books one: ledger row and balance together. */
    const credit = async (amount: number) => {
      await query(
        stack.databaseUrl,
        `WITH t AS (UPDATE "Team" SET balance = balance + $2 WHERE id = $1 RETURNING balance)
         INSERT INTO "BalanceEntry" ("teamId", kind, amount, "balanceAfter", reason)
         SELECT $1, 'credit', $2, t.balance, 'test credit' FROM t`,
        [teamId, amount],
      );
      await stack.publish(Events.TeamChanged, { teamId, action: 'updated' });
    };
    for (const token of tokens) await stack.routable(token.key, model);
    expect((await ask(tokens[0].key)).body.error).toMatchObject({ code: 'insufficient_quota' });

    await credit(5 * reservation(body()));
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    let sentCount = 1;
    for (let round = 0; round < 12; round += 1) {
      const requests = 1 + Math.floor(random() * 4);
      const work: Promise<unknown>[] = Array.from({ length: requests }, (_, i) =>
        ask(tokens[i % 2]!.key, body(`balance ${round} ${i}`), stack.edges[i % 2]),
      );
      sentCount += requests;
      if (random() < 0.5) work.push(credit(1 + Math.floor(random() * 2 * reservation(body()))));
      await Promise.all(work);
    }
    const ids = tokens.map((t) => t.id);
    await metered(ids, sentCount);
    const [books] = await query<{
      balance: string;
      debited: string;
      ledger: string;
      debits: string;
      last: string;
      billed: string;
      paid: string;
    }>(
      stack.databaseUrl,
      `SELECT t.balance::text, t.debited::text,
              (SELECT sum(amount) FROM "BalanceEntry" WHERE "teamId" = t.id)::text AS ledger,
              (SELECT -sum(amount) FROM "BalanceEntry" WHERE "teamId" = t.id AND kind = 'debit')::text AS debits,
              (SELECT "balanceAfter" FROM "BalanceEntry" WHERE "teamId" = t.id ORDER BY id DESC LIMIT 1)::text AS last,
              (SELECT count(*) FROM "UsageLog" WHERE "tokenId" = ANY($2::int[]) AND cost > 0)::text AS billed,
              (SELECT count(*) FROM "BalanceEntry" WHERE "teamId" = t.id AND kind = 'debit')::text AS paid
         FROM "Team" t WHERE t.id = $1`,
      [teamId, ids],
    );
    process.stdout.write(`balance books: ${JSON.stringify(books)}\n`);
    expect(books!.ledger).toBe(books!.balance);
    expect(books!.last).toBe(books!.balance);
    expect(books!.debits).toBe(books!.debited);
    expect(books!.paid).toBe(books!.billed);
    expect(Number(books!.debited)).toBe((await billedTo(ids)).cost);
    // Spent past zero by at most the one partial hold's shortfall: less than one request.
    expect(Number(books!.balance)).toBeGreaterThan(-reservation(body('balance 11 3')));
  }, 60_000);

  it('drops the holds of an edge that died, once they expire', async () => {
    const teamId = await createTeam();
    const token = await teamToken(teamId);
    const subject = `team:${teamId}`;
    const slow = body('held by a dying edge', true, slowModel);
    await setBudget(subject, reservation(slow), 'none');
    await stack.routable(token.key, slowModel);
    const account = `budget:${subject}@0`;
    const doomed = stack.edges[1]!;
    const inFlight = chat(doomed.url, token.key, slow).catch(() => undefined);
    await waitFor(async () => ((await heldOn(account)) > 0 ? true : undefined), {
      what: 'the hold of the request in flight',
    });
    await doomed.stop('SIGKILL');
    stack.edges.splice(1, 1);
    await inFlight;
    expect((await ask(token.key, body('while held'))).body.error).toMatchObject({
      code: 'budget_exceeded',
    });
    // 15 minutes on (DEFAULT_HOLD_MS): the dead edge's hold has expired.
    await moveClock(16 * 60_000);
    expect((await ask(token.key, body('after expiry'))).status).toBe(200);
  }, 60_000);
});
