import { query, waitFor, type AppProcess } from '@switchyard/testing';
import { Redis } from 'ioredis';
import { chat, usageRows, type Answered } from '../support/load.js';
import { PrivateRedis } from '../support/private-redis.js';
import { freshAccount, Stack, STACK_START_TIMEOUT_MS, uniqueName } from '../support/stack.js';

// Quotas under parallel requests (docs/reliability.md, "Quota overspend"): each request
// holds its worst-case cost before it is forwarded, so fifty slow streams at once cannot
// spend a token's quota fifty times over. What they may spend past the quota is what the
// last request admitted found left, short of its worst case: less than one reservation.

const QUOTA = 1_000;
/** 5 USD per million tokens in and out: 5 micro-dollars a token. */
const PRICE = 5_000_000;
const PARALLEL = 50;
const MAX_TOKENS = 16;

/** A model priced at PRICE, served by a fresh mock account whose answers take `latencyMs`. */
async function pricedModel(stack: Stack, latencyMs: number): Promise<string> {
  const model = uniqueName('priced');
  await query(
    stack.databaseUrl,
    `INSERT INTO "ModelPrice" (model, "inputPrice", "outputPrice", "updatedAt") VALUES ($1, $2, $2, now())`,
    [model, PRICE],
  );
  await stack.publish('price.changed', { model });
  const account = await freshAccount(stack);
  await stack.createChannel({ models: [model], keys: [account] });
  if (latencyMs > 0) await stack.mockFault({ key: account, latencyMs });
  return model;
}

/** What a token's requests in flight hold in the spend ledger (libs/spend). */
async function heldFor(stack: Stack, tokenId: number): Promise<number> {
  const redis = new Redis(stack.redisUrl);
  try {
    return Number((await redis.hget(`${stack.prefix}:spend:{token:${tokenId}}:h`, '#held')) ?? 0);
  } finally {
    redis.disconnect();
  }
}

describe('gateway + metering: quotas under parallel requests', () => {
  const stack = new Stack({ edges: 2, metering: true });
  let model: string;

  beforeAll(async () => {
    await stack.start();
    // Every answer takes a second: the fifty requests are all in flight together.
    model = await pricedModel(stack, 1_000);
  }, STACK_START_TIMEOUT_MS);

  afterAll(() => stack.stop());

  const body = (index: number) => ({
    model,
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: MAX_TOKENS,
    messages: [{ role: 'user', content: `spend some quota ${String(index).padStart(2, '0')}` }],
  });
  /** The edge's worst case for a body (docs/architecture.md, "Spend holds"). */
  const reservation = (index: number) =>
    Math.ceil((Buffer.byteLength(JSON.stringify(body(index))) * PRICE + MAX_TOKENS * PRICE) / 1e6);

  async function burst(edges: AppProcess[]): Promise<{
    token: number;
    answers: Answered[];
    used: number;
    billed: number;
    cheapest: number;
  }> {
    const token = await stack.createToken({ quota: QUOTA });
    await stack.routable(token.key, model);
    const answers = await Promise.all(
      Array.from({ length: PARALLEL }, (_, index) =>
        chat(edges[index % edges.length]!.url, token.key, body(index)),
      ),
    );
    // Refused requests are logged too: every answer has its row once metering is done.
    expect((await usageRows(stack.databaseUrl, token.id, PARALLEL)).rows).toHaveLength(PARALLEL);
    const [books] = await query<{ used: string; billed: string; cheapest: string | null }>(
      stack.databaseUrl,
      `SELECT t."usedQuota"::text AS used,
              (SELECT sum(cost) FROM "UsageLog" u WHERE u."tokenId" = t.id)::text AS billed,
              (SELECT min(cost) FROM "UsageLog" u WHERE u."tokenId" = t.id AND cost > 0)::text AS cheapest
         FROM "Token" t WHERE t.id = $1`,
      [token.id],
    );
    return {
      token: token.id,
      answers,
      used: Number(books!.used),
      billed: Number(books!.billed),
      cheapest: Number(books!.cheapest ?? 0),
    };
  }

  function check(result: Awaited<ReturnType<typeof burst>>, label: string): void {
    const served = result.answers.filter((a) => a.status === 200);
    const refused = result.answers.filter((a) => a.status !== 200);
    const worst = Math.max(...Array.from({ length: PARALLEL }, (_, i) => reservation(i)));
    process.stdout.write(
      `${label}: ${served.length} of ${PARALLEL} served, usedQuota ${result.used} (quota ${QUOTA}, largest reservation ${worst}, cheapest answer ${result.cheapest})\n`,
    );
    expect(result.used).toBe(result.billed);
    expect(served.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer.status).toBe(429);
      expect(JSON.parse(answer.body)).toMatchObject({
        error: { code: 'insufficient_quota', type: 'insufficient_quota' },
      });
    }
    // The overspend bound: the last request admitted held what was left, and spent at most
    // its worst case; every other held its whole worst case, which its cost fits in.
    expect(result.used).toBeLessThanOrEqual(QUOTA + worst - result.cheapest);
  }

  /** Metering settled every request: nothing is left held against the token. */
  async function nothingHeld(tokenId: number): Promise<void> {
    await waitFor(async () => ((await heldFor(stack, tokenId)) === 0 ? true : undefined), {
      what: 'every hold settled',
    });
  }

  it(`holds ${PARALLEL} parallel streams on one edge to the quota`, async () => {
    const result = await burst([stack.edges[0]!]);
    check(result, 'one edge');
    await nothingHeld(result.token);
  }, 60_000);

  it(`holds ${PARALLEL} parallel streams across two edges to the quota`, async () => {
    const result = await burst(stack.edges);
    check(result, 'two edges');
    await nothingHeld(result.token);
  }, 60_000);

  it('holds a quota to its end when the edges carve holds from blocks', async () => {
    // Eight waves of twenty slow streams, 50 ms apart, across two edges: from the second
    // wave on, each edge's demand is enough for blocks of holds (docs/architecture.md,
    // "Spend blocks"), and 160 worst cases in flight together ask for more than the quota.
    const waves = 8;
    const perWave = 20;
    const quota = 60 * reservation(0);
    const token = await stack.createToken({ quota });
    await stack.routable(token.key, model);
    const sent: Promise<Answered>[] = [];
    for (let wave = 0; wave < waves; wave += 1) {
      for (let i = 0; i < perWave; i += 1) {
        sent.push(chat(stack.edges[i % 2]!.url, token.key, body(wave * perWave + i)));
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const answers = await Promise.all(sent);
    const served = answers.filter((a) => a.status === 200).length;
    expect(answers.filter((a) => a.status !== 200).every((a) => a.status === 429)).toBe(true);
    const costs = answers.map((_, i) => reservation(i));
    const [cheapest, dearest] = [Math.min(...costs), Math.max(...costs)];
    const carved = await Promise.all(
      stack.edges.map(async (edge) => {
        const metrics = await (await fetch(`${edge.opsUrl}/metrics`)).text();
        const local = /^edge_spend_reservations_total\{path="local"[^}]*\} (\d+)/m.exec(metrics);
        return Number(local?.[1] ?? 0);
      }),
    );
    process.stdout.write(
      `blocks: ${served} of ${answers.length} served (quota ${quota}, worst cases ${cheapest}-${dearest}), carved per edge ${carved.join(', ')}\n`,
    );
    expect(carved.every((count) => count > 0)).toBe(true);
    // Every request served held its whole worst case but the one partial hold: carved or
    // not, the holds in flight together never passed the quota...
    expect(served).toBeLessThanOrEqual(Math.floor(quota / cheapest) + 1);
    // ...and blocks left unspent on the other edge near the end refused little of it early.
    expect(served).toBeGreaterThanOrEqual(Math.floor((quota - quota / 8) / dearest));
    expect((await usageRows(stack.databaseUrl, token.id, answers.length)).rows).toHaveLength(
      answers.length,
    );
    // Carves settled into their blocks, the blocks' rests given back: nothing is held.
    await nothingHeld(token.id);
    // And the token's spend is the sum of its usage rows.
    const [books] = await query<{ used: string; billed: string }>(
      stack.databaseUrl,
      `SELECT t."usedQuota"::text AS used,
              (SELECT coalesce(sum(cost), 0) FROM "UsageLog" u WHERE u."tokenId" = t.id)::text AS billed
         FROM "Token" t WHERE t.id = $1`,
      [token.id],
    );
    expect(Number(books!.used)).toBe(Number(books!.billed));
    expect(Number(books!.used)).toBeGreaterThan(0);
  }, 90_000);

  it('serves the rest of the quota once earlier requests have settled', async () => {
    const token = await stack.createToken({ quota: QUOTA });
    let served = 0;
    for (let i = 0; i < 40; i += 1) {
      const answer = await chat(stack.edge.url, token.key, body(i));
      if (answer.status !== 200) {
        expect(answer.status).toBe(429);
        break;
      }
      served += 1;
      // Each request alone, settled before the next: its hold is gone when the next comes.
      await nothingHeld(token.id);
    }
    const [row] = await query<{ used: string; status: string }>(
      stack.databaseUrl,
      'SELECT "usedQuota"::text AS used, status FROM "Token" WHERE id = $1',
      [token.id],
    );
    process.stdout.write(
      `one at a time: ${served} served, usedQuota ${row!.used} (quota ${QUOTA}), token ${row!.status}\n`,
    );
    // One at a time, the quota is spent to its end as before holds: the last request ran
    // over with what it found left, and the token is exhausted.
    expect(served).toBeGreaterThanOrEqual(Math.floor(QUOTA / 100));
    expect(Number(row!.used)).toBeGreaterThanOrEqual(QUOTA);
    expect(row!.status).toBe('exhausted');
  }, 60_000);
});

describe('gateway + metering: quotas while Redis is down', () => {
  const redis = new PrivateRedis({ persistent: true });
  let stack: Stack;

  beforeAll(async () => {
    await redis.start();
    stack = new Stack({ redisUrl: redis.url, metering: true });
    await stack.start();
  }, STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await stack?.stop();
    await redis.remove();
  });

  it('serves a token with a quota unheld (fails open, as the limits do), and holds again after', async () => {
    const model = await pricedModel(stack, 0);
    const token = await stack.createToken({ quota: QUOTA });
    const ask = () =>
      chat(stack.edge.url, token.key, {
        model,
        max_tokens: MAX_TOKENS,
        messages: [{ role: 'user', content: 'spend some quota' }],
      });
    expect((await ask()).status).toBe(200);
    await redis.stop('SIGTERM');
    try {
      expect((await ask()).status).toBe(200);
    } finally {
      await redis.start();
    }
    // Back: the spooled usage is billed and requests hold again.
    expect((await usageRows(stack.databaseUrl, token.id, 2)).rows).toHaveLength(2);
    // The settlement Redis missed is sent again: the first request's hold is gone.
    await waitFor(async () => ((await heldFor(stack, token.id)) === 0 ? true : undefined), {
      what: 'the holds settled once Redis is back',
    });
    await waitFor(async () => ((await ask()).status === 200 ? true : undefined), {
      what: 'served with Redis back',
    });
    const metrics = await (await fetch(`${stack.edge.opsUrl}/metrics`)).text();
    expect(metrics).toMatch(/^edge_spend_holds_total\{outcome="unchecked"[^}]*\} [1-9]/m);
    expect(metrics).toMatch(/^edge_spend_holds_total\{outcome="(held|partial)"[^}]*\} [1-9]/m);
  }, 90_000);
});
