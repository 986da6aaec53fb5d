import { eventually, query, type AppProcess } from '@switchyard/testing';
import { chat, type Answered } from '../support/load.js';
import { freshAccount, Stack, uniqueName } from '../support/stack.js';

// Quotas under parallel requests (docs/reliability.md, "Quota overspend"): each request
// holds its worst-case cost before it is forwarded, so fifty slow streams at once cannot
// spend a token's quota fifty times over. What they may spend past the quota is what the
// last request admitted found left, short of its worst case: less than one reservation.

const QUOTA = 1_000;
/** 5 USD per million tokens in and out: 5 micro-dollars a token. */
const PRICE = 5_000_000;
const PARALLEL = 50;
const MAX_TOKENS = 16;

describe('gateway + metering: quotas under parallel requests', () => {
  const stack = new Stack({ edges: 2, metering: true });
  let model: string;
  let account: string;

  beforeAll(async () => {
    await stack.start();
    model = uniqueName('priced');
    await query(
      stack.databaseUrl,
      `INSERT INTO "ModelPrice" (model, "inputPrice", "outputPrice", "updatedAt") VALUES ($1, $2, $2, now())`,
      [model, PRICE],
    );
    await stack.publish('price.changed', { model });
    account = await freshAccount(stack);
    await stack.createChannel({ models: [model], keys: [account] });
    // Every answer takes a second: the fifty requests are all in flight together.
    await stack.mockFault({ key: account, latencyMs: 1_000 });
  }, 90_000);

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
    await eventually(
      async () => {
        const [row] = await query<{ n: string }>(
          stack.databaseUrl,
          'SELECT count(*) AS n FROM "UsageLog" WHERE "tokenId" = $1',
          [token.id],
        );
        return Number(row!.n) === PARALLEL ? true : undefined;
      },
      15_000,
      'every request settled',
    );
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

  it(`holds ${PARALLEL} parallel streams on one edge to the quota`, async () => {
    check(await burst([stack.edges[0]!]), 'one edge');
  }, 60_000);

  it(`holds ${PARALLEL} parallel streams across two edges to the quota`, async () => {
    check(await burst(stack.edges), 'two edges');
  }, 60_000);
});
