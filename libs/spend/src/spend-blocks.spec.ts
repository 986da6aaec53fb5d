import { createRedisClient, type RedisClient } from '@switchyard/messaging';
import { SpecRedis } from '@switchyard/testing';
import { SpendBlocks, type BlockReserveResult } from './spend-blocks.js';
import { SpendLedger, spendAccount, spendKeys, type Charge } from './spend-ledger.js';

describe('SpendBlocks (real Redis)', () => {
  const spec = new SpecRedis(createRedisClient);
  let redis: RedisClient;
  let other: RedisClient;
  let ledger: SpendLedger;
  let accountCounter = 0;
  const nextAccount = () => spendAccount('token', (accountCounter += 1));
  const seedOf = (value: number) => (accounts: string[]) =>
    Promise.resolve(accounts.map(() => value));
  const held = async (account: string) =>
    Number((await redis.hget(spendKeys(account).holds, '#held')) ?? 0);
  const blockFields = async (account: string) =>
    Object.keys(await redis.hgetall(spendKeys(account).holds)).filter((f) => f.startsWith('b:'));
  const granted = (results: BlockReserveResult[]) =>
    results.reduce((sum, r) => sum + (r.kind === 'held' ? r.holds[0]! : 0), 0);
  const opened: SpendBlocks[] = [];
  const blocksOn = (ledgerOf: SpendLedger) => {
    const blocks = new SpendBlocks(ledgerOf);
    opened.push(blocks);
    return blocks;
  };
  /** `count` reservations one after another, all in the same millisecond (one second's demand). */
  const inARow = async (blocks: SpendBlocks, prefix: string, charge: Charge, count: number) => {
    const now = Date.now();
    const results: BlockReserveResult[] = [];
    for (let i = 0; i < count; i += 1) {
      results.push(await blocks.reserve(`${prefix}${i}`, [charge], seedOf(0), now));
    }
    return results;
  };

  beforeAll(async () => {
    [redis, other] = (await spec.open(2)) as [RedisClient, RedisClient];
    ledger = new SpendLedger(redis);
  });

  afterAll(async () => {
    await Promise.all(opened.map((blocks) => blocks.close()));
    await spec.close();
  });

  it('carves the requests that follow from a block taken beside one, without a hold each', async () => {
    const account = nextAccount();
    const blocks = blocksOn(ledger);
    const charge: Charge = { account, limit: 1_000_000, amount: 100 };
    const results = await inARow(blocks, 'r', charge, 12);
    // Three requests a second are not worth a block; the fourth takes one of its demand
    // (four requests) beside its own hold, and the fifth to seventh are carved from it. The
    // eighth finds a quarter of it left and renews it: it holds on its own with the next
    // block beside it (of eight), which takes the first's place and carves the rest.
    const carvedFrom = results.map((r) =>
      r.kind === 'held' ? (r.carved?.block ?? null) : 'refused',
    );
    const [first, second] = [carvedFrom[4], carvedFrom[8]];
    expect(carvedFrom).toEqual([
      ...[null, null, null, null],
      ...[first, first, first],
      null,
      ...[second, second, second, second],
    ]);
    expect(first).not.toEqual(second);
    expect(results.every((r) => r.kind === 'held' && r.holds[0] === 100)).toBe(true);
    // Five holds of their own, the first block less the rest it gave back (its three carves
    // not settled yet) and the second whole.
    expect(await held(account)).toBe(5 * 100 + 300 + 800);
  });

  it('never holds past the limit, however many reserve at once from two replicas', async () => {
    const account = nextAccount();
    const replicas = [blocksOn(new SpendLedger(redis)), blocksOn(new SpendLedger(other))];
    const limit = 20_000;
    await ledger.reserve('seed', [{ account, limit, amount: 0 }], seedOf(0));
    const results: BlockReserveResult[] = [];
    // Waves, so that demand builds up and blocks are taken, carved and renewed.
    for (let wave = 0; wave < 12; wave += 1) {
      results.push(
        ...(await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            replicas[i % 2]!.reserve(`w${wave}-${i}`, [{ account, limit, amount: 70 }], seedOf(0)),
          ),
        )),
      );
    }
    expect(results.some((r) => r.kind === 'held' && r.carved)).toBe(true);
    expect(results.some((r) => r.kind === 'refused')).toBe(true);
    // What was granted (carved or held alone, the one partial hold included) fits the limit,
    // and the ledger holds at least all of it.
    expect(granted(results)).toBeLessThanOrEqual(limit);
    expect(await held(account)).toBeLessThanOrEqual(limit);
    expect(await held(account)).toBeGreaterThanOrEqual(granted(results));
    // Near the limit blocks shrank: little of it was left unspent in them.
    expect(granted(results)).toBeGreaterThan(limit - limit / 8);
  });

  it('gives a settled carve back to its block once, the rest when the block ends, and leaves nothing held', async () => {
    const account = nextAccount();
    const blocks = blocksOn(ledger);
    const charge: Charge = { account, limit: 1_000_000, amount: 10 };
    const results = await inARow(blocks, 'q', charge, 7);
    const carved = results.flatMap((r, i) =>
      r.kind === 'held' && r.carved ? [{ ...r.carved, requestId: `q${i}` }] : [],
    );
    const alone = results.flatMap((r, i) => (r.kind === 'held' && !r.carved ? [`q${i}`] : []));
    expect(carved.length).toBeGreaterThan(0);
    // The rest goes back first (the block ended); the carves' settlements come later, twice.
    await blocks.close();
    expect(await blockFields(account)).toHaveLength(1);
    expect(await held(account)).toBe(7 * 10);
    const settlement = { account, total: 70, requestIds: alone, carves: carved };
    await ledger.settle([settlement]);
    await ledger.settle([settlement]);
    expect(await held(account)).toBe(0);
    expect(await blockFields(account)).toEqual([]);
    const { inside } = await spec.keys(`spend:{${account}}:c:*`);
    expect(inside).toEqual([]);
  });

  it('counts a settlement sent twice once while the block is still in use', async () => {
    const account = nextAccount();
    const blocks = blocksOn(ledger);
    const charge: Charge = { account, limit: 1_000_000, amount: 10 };
    const results = await inARow(blocks, 'd', charge, 6);
    const last = results[5]!;
    if (last.kind !== 'held' || !last.carved) throw new Error('expected a carved hold');
    const before = await held(account);
    const settlement = {
      account,
      total: null,
      requestIds: [],
      carves: [{ ...last.carved, requestId: 'd5' }],
    };
    await ledger.settle([settlement]);
    await ledger.settle([settlement]);
    expect(await held(account)).toBe(before - 10);
  });

  it("gives a batch's carves back per block, each request once, in one settlement or several", async () => {
    const account = nextAccount();
    const blockOf = async (id: string, spare: number) => {
      const result = await ledger.reserve(
        `own-${id}`,
        [{ account, limit: 1_000_000, amount: 0 }],
        seedOf(0),
        Date.now(),
        { id, spare, minimum: 1 },
      );
      expect(result).toMatchObject({ kind: 'held', block: spare });
    };
    await blockOf('x', 1_000);
    await blockOf('y', 300);
    const carve = (block: string, requestId: string, amount: number) => ({
      block,
      amount,
      requestId,
    });
    // Interleaved blocks, a request listed twice, and y given back whole (its rest too).
    await ledger.settle([
      {
        account,
        total: null,
        requestIds: [],
        carves: [
          carve('x', 'a', 100),
          carve('y', 'b', 100),
          carve('x', 'c', 50),
          carve('x', 'a', 100),
          carve('y', 'd', 150),
          { block: 'y', amount: 50, requestId: null },
        ],
      },
    ]);
    expect(await held(account)).toBe(1_000 - 150);
    expect(await blockFields(account)).toEqual(['b:x']);
    // Sent again with one more: only the new one counts.
    await ledger.settle([
      {
        account,
        total: null,
        requestIds: [],
        carves: [carve('x', 'a', 100), carve('x', 'c', 50), carve('x', 'e', 25)],
      },
    ]);
    expect(await held(account)).toBe(1_000 - 175);
    const { inside } = await spec.keys(`spend:{${account}}:c:*`);
    expect(inside).toHaveLength(1);
    expect((await redis.smembers(`spend:{${account}}:c:x`)).sort()).toEqual(['a', 'c', 'e']);
  });

  it('puts a released carve back into the block while it is in use, and into the ledger after', async () => {
    const account = nextAccount();
    const blocks = blocksOn(ledger);
    const charge: Charge = { account, limit: 1_000_000, amount: 10 };
    const results = await inARow(blocks, 'f', charge, 6);
    const [first, second] = results.slice(4).map((r) => (r.kind === 'held' ? r.carved : null));
    const before = await held(account);
    await blocks.release('f4', [account], first!);
    // Back in the block here: the ledger still holds the block whole.
    expect(await held(account)).toBe(before);
    await blocks.close();
    // The block's rest (the released carve included) went back; f5's carve is still held.
    expect(await held(account)).toBe(4 * 10 + 10);
    await blocks.release('f5', [account], second!);
    expect(await held(account)).toBe(4 * 10);
  });

  it('renews a block running low before it runs out: one request holds alone, the rest are carved', async () => {
    const account = nextAccount();
    const blocks = blocksOn(ledger);
    const charge: Charge = { account, limit: 1_000_000_000, amount: 100 };
    let alone = 0;
    let requests = 0;
    // 40 turns of 32 requests at once; the first two, before the demand is known, hold
    // alone and are not counted.
    for (let turn = 0; turn < 40; turn += 1) {
      const results = await Promise.all(
        Array.from({ length: 32 }, (_, i) => blocks.reserve(`n${turn}-${i}`, [charge], seedOf(0))),
      );
      expect(results.every((r) => r.kind === 'held' && r.holds[0] === 100)).toBe(true);
      requests += results.length;
      if (turn >= 2) alone += results.filter((r) => r.kind === 'held' && !r.carved).length;
    }
    expect(requests).toBe(1_280);
    // About one a block (10 when written). Without renewal each block ran out with a
    // turn's requests still to come, and every one of them held alone: over a hundred here.
    expect(alone).toBeLessThanOrEqual(20);
  });

  it('carves from the rest when the renewal finds no room left in the ledger', async () => {
    const account = nextAccount();
    const [a, b] = [blocksOn(new SpendLedger(redis)), blocksOn(new SpendLedger(other))];
    const limit = 100_000;
    const charge: Charge = { account, limit, amount: 100 };
    // A takes a block of its demand (sixteen requests) and carves from it.
    const first = await inARow(a, 'a', charge, 16);
    const carved = first.filter((r) => r.kind === 'held' && r.carved).length;
    expect(carved).toBeGreaterThan(0);
    // The ledger holds A's requests held alone, its carves and its block's rest.
    const rest = (await held(account)) - first.length * 100;
    expect(rest).toBeGreaterThan(0);
    // B takes the rest of the room.
    let byB = 0;
    while ((await b.reserve(`b${byB}`, [charge], seedOf(0))).kind === 'held') byB += 1;
    // A's renewal is refused: its requests are carved from what its block has left, then refused.
    const more: BlockReserveResult[] = [];
    for (let i = 0; ; i += 1) {
      const result = await a.reserve(`a-more${i}`, [charge], seedOf(0));
      if (result.kind !== 'held') break;
      expect(result.carved).toBeDefined();
      more.push(result);
    }
    expect(more.length * 100).toBe(rest);
    expect(granted([...first, ...more]) + byB * 100).toBeLessThanOrEqual(limit);
    expect(await held(account)).toBeLessThanOrEqual(limit);
  });

  it('takes a block of at most a sixteenth of the room left, and none near the limit', async () => {
    const account = nextAccount();
    const charge: Charge = { account, limit: 1_000, amount: 10 };
    expect(
      await ledger.reserve('b1', [charge], seedOf(0), Date.now(), {
        id: 'x:1',
        spare: 1_000,
        minimum: 10,
      }),
    ).toEqual({ kind: 'held', holds: [10], block: Math.floor((1_000 - 10) / 16) });
    await ledger.settle([{ account, total: 850, requestIds: ['b1'] }]);
    await ledger.settle([
      {
        account,
        total: null,
        requestIds: [],
        carves: [{ block: 'x:1', amount: 61, requestId: null }],
      },
    ]);
    // 150 left: 140 after the request, a sixteenth of it less than one more request.
    expect(
      await ledger.reserve('b2', [charge], seedOf(0), Date.now(), {
        id: 'x:2',
        spare: 1_000,
        minimum: 10,
      }),
    ).toEqual({ kind: 'held', holds: [10], block: 0 });
    expect(await held(account)).toBe(10);
  });
});
