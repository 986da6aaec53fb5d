import { createRedisClient, type RedisClient } from '@switchyard/messaging';
import type { Redis } from 'ioredis';
import { SpecRedis } from '@switchyard/testing';
import { SpendLedger, spendAccount, spendKeys, type Charge } from './spend-ledger.js';

describe('SpendLedger (real Redis)', () => {
  const spec = new SpecRedis(createRedisClient);
  let redis: RedisClient;
  let other: RedisClient;
  let ledger: SpendLedger;
  let accountCounter = 0;
  const nextAccount = () => spendAccount('token', (accountCounter += 1));
  const noSeed = () => Promise.reject(new Error('no seed expected'));
  const seedOf =
    (value: number, calls: string[][] = []) =>
    (accounts: string[]) => {
      calls.push(accounts);
      return Promise.resolve(accounts.map(() => value));
    };
  const held = async (account: string) =>
    Number((await redis.hget(spendKeys(account).holds, '#held')) ?? 0);
  const settled = async (account: string) => redis.get(spendKeys(account).settled);
  /** Script calls `redis` has sent. */
  let scripts = 0;
  /** Counts the scripts sent while `run` runs. */
  async function scriptCalls<T>(run: () => Promise<T>): Promise<[T, number]> {
    const before = scripts;
    const result = await run();
    return [result, scripts - before];
  }

  beforeAll(async () => {
    [redis, other] = (await spec.open(2)) as [RedisClient, RedisClient];
    // A standalone client here (Redis, not a Cluster): its sendCommand, counted.
    const client = redis as Redis;
    const send = client.sendCommand.bind(client);
    client.sendCommand = (command, stream) => {
      if (command.name === 'evalsha' || command.name === 'eval') scripts += 1;
      return send(command, stream);
    };
    ledger = new SpendLedger(redis);
  });

  afterAll(() => spec.close());

  it('seeds the settled spend once from the store of record, then holds without asking it', async () => {
    const account = nextAccount();
    const calls: string[][] = [];
    const charge: Charge = { account, limit: 1_000, amount: 100 };
    expect(await ledger.reserve('a', [charge], seedOf(250, calls))).toEqual({
      kind: 'held',
      holds: [100],
    });
    expect(await ledger.reserve('b', [charge], seedOf(0, calls))).toEqual({
      kind: 'held',
      holds: [100],
    });
    expect(calls).toEqual([[account]]);
    expect(await settled(account)).toBe('250');
    expect(await held(account)).toBe(200);
  });

  it('never holds past the limit, however many reserve at once from two replicas', async () => {
    const account = nextAccount();
    const replicas = [new SpendLedger(redis), new SpendLedger(other)];
    await replicas[0]!.reserve('seed', [{ account, limit: 1_000, amount: 0 }], seedOf(0));
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        replicas[i % 2]!.reserve(`r${i}`, [{ account, limit: 1_000, amount: 70 }], noSeed),
      ),
    );
    const holds = results.flatMap((r) => (r.kind === 'held' ? r.holds : []));
    // Fourteen whole holds (980), then the one partial hold of what is left.
    expect(holds.filter((h) => h === 70)).toHaveLength(14);
    expect(holds.filter((h) => h !== 70)).toEqual([20]);
    expect(results.filter((r) => r.kind === 'refused')).toHaveLength(85);
    expect(holds.reduce((a, b) => a + b, 0)).toBe(1_000);
    expect(await held(account)).toBe(1_000);
  });

  it("sends a turn's reservations as one script call, each answered as if sent alone", async () => {
    const account = nextAccount();
    await ledger.reserve('seed', [{ account, limit: 1_000, amount: 0 }], seedOf(0));
    const [results, calls] = await scriptCalls(() =>
      Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          ledger.reserve(`t${i}`, [{ account, limit: 1_000, amount: 70 }], noSeed),
        ),
      ),
    );
    // At most 64 a call (Redis runs a script alone): two calls for the hundred.
    expect(calls).toBe(2);
    expect(results.slice(0, 14)).toEqual(
      Array.from({ length: 14 }, () => ({ kind: 'held', holds: [70] })),
    );
    expect(results[14]).toEqual({ kind: 'held', holds: [20] });
    expect(results.slice(15)).toEqual(
      Array.from({ length: 85 }, () => ({ kind: 'refused', index: 0, available: 0 })),
    );

    // In one turn: one that must first be seeded, one refused on its second account (so it
    // holds on neither), one that fits. Two calls: the turn's, then the seeded one's again.
    const unseeded = nextAccount();
    const roomy = nextAccount();
    await ledger.reserve('r', [{ account: roomy, limit: 1_000, amount: 1 }], seedOf(0));
    const [mixed, mixedCalls] = await scriptCalls(() =>
      Promise.all([
        ledger.reserve('m1', [{ account: unseeded, limit: 100, amount: 60 }], seedOf(30)),
        ledger.reserve(
          'm2',
          [
            { account: roomy, limit: 1_000, amount: 10 },
            { account, limit: 1_000, amount: 10 },
          ],
          noSeed,
        ),
        ledger.reserve('m3', [{ account: roomy, limit: 1_000, amount: 10 }], noSeed),
      ]),
    );
    expect(mixedCalls).toBe(2);
    expect(mixed).toEqual([
      { kind: 'held', holds: [60] },
      { kind: 'refused', index: 1, available: 0 },
      { kind: 'held', holds: [10] },
    ]);
    expect(await held(roomy)).toBe(11);
    expect(await held(unseeded)).toBe(60);
  });

  it('refuses all accounts or holds on all of them', async () => {
    const roomy = nextAccount();
    const tight = nextAccount();
    await ledger.reserve('fill', [{ account: tight, limit: 100, amount: 100 }], seedOf(0));
    const result = await ledger.reserve(
      'both',
      [
        { account: roomy, limit: 1_000, amount: 50 },
        { account: tight, limit: 100, amount: 50 },
      ],
      seedOf(0),
    );
    expect(result).toEqual({ kind: 'refused', index: 1, available: 0 });
    expect(await held(roomy)).toBe(0);

    await ledger.release('fill', [tight]);
    expect(
      await ledger.reserve(
        'both',
        [
          { account: roomy, limit: 1_000, amount: 50 },
          { account: tight, limit: 100, amount: 50 },
        ],
        // The refusal came before the roomy account's copy was asked for.
        seedOf(0),
      ),
    ).toEqual({ kind: 'held', holds: [50, 50] });
  });

  it('takes a partial hold for one request at a time, and none once the limit is reached', async () => {
    const account = nextAccount();
    const charge = (amount: number): Charge => ({ account, limit: 100, amount });
    expect(await ledger.reserve('p1', [charge(80)], seedOf(60))).toEqual({
      kind: 'held',
      holds: [40],
    });
    // Room is left after a cheaper settlement, but the partial hold is still out.
    expect(await ledger.reserve('p2', [charge(80)], noSeed)).toMatchObject({ kind: 'refused' });
    expect(await ledger.reserve('small', [charge(0)], noSeed)).toEqual({
      kind: 'held',
      holds: [0],
    });
    await ledger.settle([{ account, total: 90, requestIds: ['p1'] }]);
    expect(await ledger.reserve('p3', [charge(80)], noSeed)).toEqual({
      kind: 'held',
      holds: [10],
    });
    await ledger.settle([{ account, total: 130, requestIds: ['p3'] }]);
    expect(await ledger.reserve('p4', [charge(0)], noSeed)).toEqual({
      kind: 'refused',
      index: 0,
      available: 0,
    });
  });

  it('keeps a request to one hold when it reserves again', async () => {
    const account = nextAccount();
    const charge: Charge = { account, limit: 1_000, amount: 300 };
    await ledger.reserve('same', [charge], seedOf(0));
    expect(await ledger.reserve('same', [charge], noSeed)).toEqual({ kind: 'held', holds: [300] });
    expect(await held(account)).toBe(300);
  });

  it('drops holds past their expiry, as after an edge died holding them', async () => {
    const account = nextAccount();
    const short = new SpendLedger(redis, { holdMs: 1_000 });
    const now = Date.now();
    await short.reserve('lost', [{ account, limit: 100, amount: 100 }], seedOf(0), now);
    expect(
      await short.reserve('next', [{ account, limit: 100, amount: 100 }], noSeed, now + 999),
    ).toMatchObject({ kind: 'refused' });
    expect(
      await short.reserve('next', [{ account, limit: 100, amount: 100 }], noSeed, now + 1_000),
    ).toEqual({ kind: 'held', holds: [100] });
    expect(await held(account)).toBe(100);
    expect(await redis.zcard(spendKeys(account).expiries)).toBe(1);
  });

  it('settles once: a replayed or out-of-order settlement changes nothing', async () => {
    const account = nextAccount();
    const charge: Charge = { account, limit: 1_000, amount: 100 };
    await ledger.reserve('s1', [charge], seedOf(0));
    await ledger.reserve('s2', [charge], noSeed);
    await ledger.settle([{ account, total: 40, requestIds: ['s1'] }]);
    expect(await settled(account)).toBe('40');
    expect(await held(account)).toBe(100);
    await ledger.settle([{ account, total: 70, requestIds: ['s2'] }]);
    // The first batch's settlement again, and late: neither lowers nor adds.
    await ledger.settle([{ account, total: 40, requestIds: ['s1'] }]);
    expect(await settled(account)).toBe('70');
    expect(await held(account)).toBe(0);
  });

  it('releases a failed request without adding to the settled spend', async () => {
    const account = nextAccount();
    const charge: Charge = { account, limit: 100, amount: 100 };
    await ledger.reserve('failed', [charge], seedOf(10));
    await ledger.release('failed', [account]);
    expect(await held(account)).toBe(0);
    expect(await settled(account)).toBe('10');
    expect(await ledger.reserve('after', [{ ...charge, amount: 90 }], noSeed)).toEqual({
      kind: 'held',
      holds: [90],
    });
  });

  it('seeds from a settlement when it comes first, and a later seed does not lower it', async () => {
    const account = nextAccount();
    await ledger.settle([{ account, total: 500, requestIds: ['gone'] }]);
    expect(await settled(account)).toBe('500');
    expect(await ledger.reserve('x', [{ account, limit: 1_000, amount: 600 }], noSeed)).toEqual({
      kind: 'held',
      holds: [500],
    });
  });

  it('reads the settled spend again once its copy is forgotten or expired', async () => {
    const account = nextAccount();
    const short = new SpendLedger(redis, { settledMs: 200 });
    await short.reserve('f1', [{ account, limit: 1_000, amount: 1 }], seedOf(100));
    await short.forget(account);
    const calls: string[][] = [];
    await short.reserve('f2', [{ account, limit: 1_000, amount: 1 }], seedOf(0, calls));
    expect(calls).toHaveLength(1);
    expect(await settled(account)).toBe('0');
    await new Promise((resolve) => setTimeout(resolve, 250));
    await short.reserve('f3', [{ account, limit: 1_000, amount: 1 }], seedOf(7, calls));
    expect(calls).toHaveLength(2);
    expect(await settled(account)).toBe('7');
  });

  it('keeps its keys inside the namespace, one hash tag per account', async () => {
    const { inside, outside } = await spec.keys('spend:*');
    expect(inside.length).toBeGreaterThan(0);
    expect(outside).toEqual([]);
    for (const key of inside) expect(key).toMatch(/^[^{]*:spend:\{token:\d+\}:[shx]$/);
  });
});
