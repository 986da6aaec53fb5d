import {
  busConnectionOf,
  createRedisClient,
  redisReady,
  type RedisClient,
} from '@switchyard/messaging';
import { SpendLedger, spendKeys, type Charge } from '@switchyard/spend';
import { randomBytes } from 'node:crypto';
import { ClusterTopology } from '../support/redis-topology.js';

// A request's spend holds on a real Redis Cluster (docs/budgets.md, "Redis Cluster"): its
// token's quota, its member, team and gateway budgets and its team's balance are accounts
// on different slots, which one script may not touch together (CROSSSLOT). The ledger
// reserves each on its own and gives back what it took when one refuses: all or none, and
// under 64 parallel requests a team budget is spent to its end and not past it.

const AMOUNT = 1_000;
const PERIOD = 1_795_824_000_000;

/** The accounts a request of token `tokenId` of team 3 pays with (docs/budgets.md, "Reservations"). */
function accounts(tokenId: number): string[] {
  return [
    `token:${tokenId}`,
    `budget:member:3:${tokenId}@${PERIOD}`,
    `budget:team:3@${PERIOD}`,
    `budget:gateway@${PERIOD}`,
    'balance:team:3',
  ];
}

describe('spend holds on Redis Cluster', () => {
  const topology = new ClusterTopology();
  let redis: RedisClient | undefined;
  let ledger: SpendLedger;

  beforeAll(async () => {
    await topology.startAll();
    redis = createRedisClient(
      busConnectionOf({
        REDIS_URL: 'redis://127.0.0.1',
        REDIS_CLUSTER_NODES: topology.nodes,
        REDIS_PREFIX: `h${randomBytes(3).toString('hex')}`,
      }),
    );
    await redisReady(redis, 30_000);
    ledger = new SpendLedger(redis);
  }, 60_000);

  afterAll(async () => {
    redis?.disconnect();
    await topology.stop();
  });

  /** What an account holds in all, read from its hash. */
  async function held(account: string): Promise<number> {
    return Number((await redis!.hget(spendKeys(account).holds, '#held')) ?? 0);
  }

  it("reserves a request's accounts of several slots, all or none", async () => {
    const paying = accounts(1);
    const slots = await Promise.all(
      paying.map((account) => redis!.cluster('KEYSLOT', spendKeys(account).holds)),
    );
    expect(new Set(slots).size).toBeGreaterThan(1);

    const seeded: string[][] = [];
    const seed = (names: string[]) => {
      seeded.push(names);
      return Promise.resolve(names.map(() => 0));
    };
    const charges = (limits: number[]): Charge[] =>
      paying.map((account, i) => ({ account, limit: limits[i]!, amount: AMOUNT }));
    const roomy = paying.map(() => 1_000_000);
    expect(await ledger.reserve('r1', charges(roomy), seed)).toEqual({
      kind: 'held',
      holds: paying.map(() => AMOUNT),
    });
    // Every settled copy was missing, and read once, together.
    expect(seeded).toEqual([paying]);
    // Retried, the same request takes nothing twice.
    await ledger.reserve('r1', charges(roomy), seed);
    for (const account of paying) expect(await held(account)).toBe(AMOUNT);

    // The gateway's budget (index 3) has room for one request, r1's: a request it refuses
    // gives back what it took on the other four, each on another slot.
    const tight = [...roomy];
    tight[3] = AMOUNT;
    expect(await ledger.reserve('r2', charges(tight), seed)).toEqual({
      kind: 'refused',
      index: 3,
      available: 0,
    });
    for (const account of paying) expect(await held(account)).toBe(AMOUNT);

    await ledger.release('r1', paying);
    for (const account of paying) expect(await held(account)).toBe(0);
  });

  it('spends a shared team budget to its end and not past it, under 64 parallel requests', async () => {
    // 20 requests' worth and half of one: 20 full holds and one partial.
    const teamLimit = 20 * AMOUNT + AMOUNT / 2;
    const team = `budget:team:9@${PERIOD}`;
    const gateway = `budget:gateway:9@${PERIOD}`;
    const tokens = Array.from({ length: 8 }, (_, i) => `token:9${i}`);
    const requests = Array.from({ length: 64 }, (_, n) => ({
      id: `p${n}`,
      token: tokens[n % tokens.length]!,
    }));
    const results = await Promise.all(
      requests.map(({ id, token }) =>
        ledger.reserve(
          id,
          [
            { account: token, limit: 1_000_000, amount: AMOUNT },
            { account: team, limit: teamLimit, amount: AMOUNT },
            { account: gateway, limit: 1_000_000, amount: AMOUNT },
          ],
          (names) => Promise.resolve(names.map(() => 0)),
        ),
      ),
    );
    const served = results.flatMap((result, n) =>
      result.kind === 'held' ? [{ ...requests[n]!, holds: result.holds }] : [],
    );
    for (const result of results) {
      if (result.kind === 'refused') expect(result.index).toBe(1);
    }
    expect(served).toHaveLength(21);
    expect(served.filter(({ holds }) => holds[1] === AMOUNT / 2)).toHaveLength(1);
    // The refused requests left nothing behind: each account holds exactly what the
    // served requests hold there.
    expect(await held(team)).toBe(teamLimit);
    expect(await held(gateway)).toBe(21 * AMOUNT);
    for (const token of tokens) {
      expect(await held(token)).toBe(served.filter((s) => s.token === token).length * AMOUNT);
    }
  });
});
