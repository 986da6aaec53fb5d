import { createRedisClient, type RedisClient } from '@switchyard/messaging';
import type { Redis } from 'ioredis';
import { SpecRedis, waitFor } from '@switchyard/testing';
import { AccountLimiter, type AccountLease, type AccountLimits } from './account-limiter.js';

describe('AccountLimiter (real Redis)', () => {
  const spec = new SpecRedis(createRedisClient);
  let redis: RedisClient;
  let other: RedisClient;
  let limiter: AccountLimiter;
  let requestCounter = 0;
  const nextId = () => `req-${(requestCounter += 1)}`;

  beforeAll(async () => {
    [redis, other] = (await spec.open(2)) as [RedisClient, RedisClient];
    limiter = new AccountLimiter(redis);
  });

  afterAll(() => spec.close());

  const account = (keyId: number, limits: Partial<AccountLimits>): AccountLimits => ({
    keyId,
    rpm: null,
    tpm: null,
    concurrency: null,
    ...limits,
  });

  it("sends a turn's admissions as one script call, each answered as if sent alone", async () => {
    const quiet = new AccountLimiter(redis);
    const accounts = [account(31, { rpm: 12 }), account(32, { rpm: 3 })];
    // A standalone client here (Redis, not a Cluster): its sendCommand, counted.
    const client = redis as Redis;
    const send = client.sendCommand.bind(client);
    let scripts = 0;
    // Counts on this client from now on: no other test counts its scripts.
    client.sendCommand = (command, stream) => {
      if (command.name === 'evalsha' || command.name === 'eval') scripts += 1;
      return send(command, stream);
    };
    try {
      // At once, in one turn: more than the two accounts' room together.
      const results = await Promise.all(
        Array.from({ length: 18 }, () =>
          quiet.acquire({ requestId: nextId(), estimatedTokens: 1, accounts }),
        ),
      );
      expect(scripts).toBe(1);
      // In the order asked: the first account's twelve, the second's three, then none.
      expect(results.map((r) => (r.kind === 'acquired' ? r.index : r.kind))).toEqual([
        ...Array<number>(12).fill(0),
        ...Array<number>(3).fill(1),
        ...Array<string>(3).fill('saturated'),
      ]);
    } finally {
      await quiet.close();
    }
  });

  it('takes the first account with room, then the next once it is full (requests per minute)', async () => {
    const accounts = [account(1, { rpm: 2 }), account(2, { rpm: 1 })];
    const now = 1_000_000;
    const results = [];
    for (let i = 0; i < 4; i += 1) {
      results.push(
        await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, accounts, now: now + i }),
      );
    }
    expect(results.map((r) => (r.kind === 'acquired' ? r.index : r.kind))).toEqual([
      0,
      0,
      1,
      'saturated',
    ]);
    const later = await limiter.acquire({
      requestId: nextId(),
      estimatedTokens: 1,
      accounts,
      now: now + 60_001,
    });
    expect(later).toMatchObject({ kind: 'acquired', index: 0 });
  });

  it('charges tokens per minute with an estimate and corrects it on release', async () => {
    const accounts = [account(3, { tpm: 100 })];
    const first = await limiter.acquire({ requestId: nextId(), estimatedTokens: 80, accounts });
    expect(first.kind).toBe('acquired');
    expect(
      (await limiter.acquire({ requestId: nextId(), estimatedTokens: 30, accounts })).kind,
    ).toBe('saturated');
    if (first.kind === 'acquired') first.lease.release(20);
    // Releases go out in a batch a moment later; a refused request is not charged.
    await waitFor(
      async () =>
        (await limiter.acquire({ requestId: nextId(), estimatedTokens: 30, accounts })).kind ===
        'acquired',
      { what: 'room for 30 tokens once the estimate is corrected' },
    );
  });

  it('holds concurrency until the lease is released', async () => {
    const accounts = [account(4, { concurrency: 1 })];
    const held = await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, accounts });
    expect(
      (await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, accounts })).kind,
    ).toBe('saturated');
    if (held.kind === 'acquired') held.lease.release(1);
    // Releases go out in a batch a moment later.
    await waitFor(
      async () =>
        (await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, accounts })).kind ===
        'acquired',
      { what: 'the slot given back' },
    );
  });

  it('gives back many leases in one batch', async () => {
    const accounts = [account(9, { concurrency: 3, tpm: 1_000 })];
    const held = await Promise.all(
      Array.from({ length: 3 }, () =>
        limiter.acquire({ requestId: nextId(), estimatedTokens: 300, accounts }),
      ),
    );
    expect(held.map((r) => r.kind)).toEqual(['acquired', 'acquired', 'acquired']);
    for (const result of held) if (result.kind === 'acquired') result.lease.release(10);
    await limiter.flush();
    // Three slots free again, and 30 tokens used instead of the 900 estimated.
    const again = await Promise.all(
      Array.from({ length: 3 }, () =>
        limiter.acquire({ requestId: nextId(), estimatedTokens: 300, accounts }),
      ),
    );
    expect(again.map((r) => r.kind)).toEqual(['acquired', 'acquired', 'acquired']);
  });

  it('sends a freed slot at once, and corrections with the next batch', async () => {
    // Corrections wait a minute here: within the test, only a slot or a flush sends them.
    const patient = new AccountLimiter(redis, { correctionWaitMs: 60_000 });
    const big = (accounts: AccountLimits[]) =>
      patient.acquire({ requestId: nextId(), estimatedTokens: 800, accounts });
    /** A request estimated at 300 tokens that used 10. */
    const small = async (accounts: AccountLimits[]) => {
      const result = await patient.acquire({ requestId: nextId(), estimatedTokens: 300, accounts });
      if (result.kind !== 'acquired') throw new Error(`not acquired: ${result.kind}`);
      result.lease.release(10);
    };
    try {
      // 800 more tokens fit once the correction is in Redis.
      const tokensOnly = [account(41, { tpm: 1_000 })];
      await small(tokensOnly);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await big(tokensOnly)).kind).toBe('saturated');
      await patient.flush();
      expect((await big(tokensOnly)).kind).toBe('acquired');

      // A slot goes back on its own, and the correction of its request with it.
      const withSlot = [account(42, { tpm: 1_000, concurrency: 1 })];
      await small(withSlot);
      await waitFor(async () => (await big(withSlot)).kind === 'acquired' || undefined, {
        what: 'the slot and the correction given back',
      });
    } finally {
      await patient.close();
    }
  });

  it('lets a concurrency lease of a dead holder expire on its own', async () => {
    const shortLeases = new AccountLimiter(redis, { leaseMs: 100 });
    const accounts = [account(5, { concurrency: 1 })];
    await shortLeases.acquire({ requestId: nextId(), estimatedTokens: 1, accounts });
    expect(
      (await shortLeases.acquire({ requestId: nextId(), estimatedTokens: 1, accounts })).kind,
    ).toBe('saturated');
    // Asked as if 150 ms later, past the lease's 100 ms, instead of waiting for it.
    const later = Date.now() + 150;
    expect(
      (await shortLeases.acquire({ requestId: nextId(), estimatedTokens: 1, accounts, now: later }))
        .kind,
    ).toBe('acquired');
  });

  it('refuses a token over its own request rate before looking at accounts', async () => {
    const accounts = [account(6, {})];
    const token = { id: 77, rateLimit: 2 };
    expect(
      (await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, token, accounts })).kind,
    ).toBe('acquired');
    expect(
      (await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, token, accounts })).kind,
    ).toBe('acquired');
    const refused = await limiter.acquire({
      requestId: nextId(),
      estimatedTokens: 1,
      token,
      accounts,
    });
    expect(refused.kind).toBe('token_rate_limited');
    expect(refused.kind === 'token_rate_limited' && refused.retryAfterMs).toBeGreaterThan(0);
  });

  it('never overshoots an account when two clients race for it', async () => {
    const accounts = [account(8, { rpm: 25 })];
    const limiters = [new AccountLimiter(redis), new AccountLimiter(other)];
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        limiters[i % 2]!.acquire({ requestId: nextId(), estimatedTokens: 1, accounts }),
      ),
    );
    expect(results.filter((r) => r.kind === 'acquired')).toHaveLength(25);
  });

  describe('allowances (blocks taken ahead of demand)', () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const logSize = (keyId: number) => redis.zcard(`{lim}:k:${keyId}:rpm`);
    const tokensCharged = async (keyId: number) =>
      Object.values(await redis.hgetall(`{lim}:k:${keyId}:tpm`)).reduce(
        (sum, value) => sum + Number(value),
        0,
      );
    const slotsTaken = (keyId: number) => redis.zcard(`{lim}:k:${keyId}:conc`);

    it('takes blocks up to the room and never beyond, and spends most requests locally', async () => {
      // 160 a minute: an edge may hold 10 spare entries (a sixteenth).
      const limiter = new AccountLimiter(redis);
      const accounts = [account(101, { rpm: 160 })];
      let admitted = 0;
      let local = 0;
      let refused = 0;
      for (let i = 0; i < 200; i += 1) {
        const result = await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, accounts });
        if (result.kind !== 'acquired') {
          refused += 1;
          continue;
        }
        admitted += 1;
        if (!result.roundTrip) local += 1;
        const held = (await logSize(101)) - admitted;
        expect(held).toBeGreaterThanOrEqual(0);
        expect(held).toBeLessThanOrEqual(10);
      }
      expect(admitted).toBe(160);
      expect(refused).toBe(40);
      expect(await logSize(101)).toBe(160);
      expect(local).toBeGreaterThan(100);
      await limiter.close();
    });

    it('gives back unspent requests and tokens when a block expires', async () => {
      const limiter = new AccountLimiter(redis, { validityMs: 300 });
      const accounts = [account(102, { rpm: 16_000, tpm: 1_600_000 })];
      const token = { id: 7_001, rateLimit: 16_000 };
      let local = 0;
      for (let i = 0; i < 50; i += 1) {
        const result = await limiter.acquire({
          requestId: nextId(),
          estimatedTokens: 100,
          token,
          accounts,
        });
        expect(result.kind).toBe('acquired');
        if (result.kind === 'acquired' && !result.roundTrip) local += 1;
      }
      expect(local).toBeGreaterThan(25);
      // Held ahead of demand: more entries and tokens than the 50 requests used.
      expect(await logSize(102)).toBeGreaterThan(50);
      expect(await tokensCharged(102)).toBeGreaterThan(5_000);
      expect(await redis.zcard(`{lim}:t:${token.id}:rpm`)).toBeGreaterThan(50);
      // Once the block's 300 ms are over, the sweep sees it and the batch goes.
      await waitFor(async () => (await logSize(102)) === 50, { what: 'the unspent entries back' });
      await waitFor(async () => (await tokensCharged(102)) === 5_000, {
        what: 'the unspent tokens back',
      });
      await waitFor(async () => (await redis.zcard(`{lim}:t:${token.id}:rpm`)) === 50, {
        what: "the token's unspent entries back",
      });
      await limiter.close();
    });

    it('degrades to one round trip per request under small limits', async () => {
      const limiter = new AccountLimiter(redis);
      const accounts = [account(103, { rpm: 12, concurrency: 15, tpm: 1_000 })];
      const results = [];
      for (let i = 0; i < 14; i += 1) {
        const result = await limiter.acquire({
          requestId: nextId(),
          estimatedTokens: 10,
          accounts,
        });
        results.push(result);
        const admitted = results.filter((r) => r.kind === 'acquired').length;
        // Nothing taken ahead of demand: the log holds exactly the requests admitted.
        expect(await logSize(103)).toBe(admitted);
        expect(await slotsTaken(103)).toBe(admitted);
      }
      expect(results.map((r) => (r.kind === 'acquired' ? r.roundTrip : r.kind))).toEqual([
        ...Array<boolean>(12).fill(true),
        'saturated',
        'saturated',
      ]);
      await limiter.close();
    });

    it('holds nothing ahead for a quiet account or token: no unit to give back', async () => {
      const limiter = new AccountLimiter(redis);
      const accounts = [account(108, { rpm: 16_000, tpm: 1_600_000, concurrency: 1_000 })];
      const token = { id: 7_002, rateLimit: 16_000 };
      for (let i = 1; i <= 4; i += 1) {
        const result = await limiter.acquire({
          requestId: nextId(),
          estimatedTokens: 100,
          token,
          accounts,
        });
        expect(result).toMatchObject({ kind: 'acquired', roundTrip: true });
        // Exactly what the requests took, on the account and on the token.
        expect(await logSize(108)).toBe(i);
        expect(await tokensCharged(108)).toBe(100 * i);
        expect(await redis.zcard(`{lim}:t:${token.id}:rpm`)).toBe(i);
        // Three a second, under the demand worth a block.
        await sleep(330);
      }
      await limiter.close();
    });

    it('holds no spares of one limit while another is too small to have any', async () => {
      // As the two-edge test of docs/reliability.md: 30 a minute could spare one entry,
      // but 2 at once spares no slot, so an entry held here could never be spent.
      const limiter = new AccountLimiter(redis);
      const accounts = [account(107, { rpm: 30, concurrency: 2 })];
      let admitted = 0;
      for (let i = 0; i < 40; i += 1) {
        const result = await limiter.acquire({ requestId: nextId(), estimatedTokens: 1, accounts });
        if (result.kind === 'acquired') {
          admitted += 1;
          result.lease.release(1);
          await limiter.flush();
        }
        expect(await logSize(107)).toBe(admitted);
      }
      expect(admitted).toBe(30);
      await limiter.close();
    });

    it('never lets two replicas hammering one account exceed its requests per minute or concurrency', async () => {
      const RPM = 320;
      const CONCURRENCY = 32;
      const accounts = [account(104, { rpm: RPM, concurrency: CONCURRENCY })];
      const replicas = [new AccountLimiter(redis), new AccountLimiter(other)];
      let admitted = 0;
      let local = 0;
      let inFlight = 0;
      let mostInFlight = 0;
      const worker = async (replica: AccountLimiter) => {
        for (let i = 0; i < 40; i += 1) {
          const result = await replica.acquire({
            requestId: nextId(),
            estimatedTokens: 1,
            accounts,
          });
          if (result.kind !== 'acquired') continue;
          admitted += 1;
          if (!result.roundTrip) local += 1;
          inFlight += 1;
          mostInFlight = Math.max(mostInFlight, inFlight);
          await sleep(i % 3);
          inFlight -= 1;
          result.lease.release(1);
        }
      };
      // 20 requests at once on each replica, 1,600 in all.
      await Promise.all(
        replicas.flatMap((replica) => Array.from({ length: 20 }, () => worker(replica))),
      );
      expect(admitted).toBeLessThanOrEqual(RPM);
      expect(admitted).toBeGreaterThan(RPM / 2);
      expect(mostInFlight).toBeLessThanOrEqual(CONCURRENCY);
      expect(local).toBeGreaterThan(0);
      await Promise.all(replicas.map((replica) => replica.close()));
      // Everything unspent went back: the log counts exactly the requests served.
      expect(await logSize(104)).toBe(admitted);
      expect(await slotsTaken(104)).toBe(0);
    });

    it("gives an idle replica's free slots back, so the other replica can take them", async () => {
      // 16 at once: a replica may keep one free slot for its next request.
      const accounts = [account(105, { concurrency: 16 })];
      const a = new AccountLimiter(redis);
      const b = new AccountLimiter(other);
      const acquire = (replica: AccountLimiter) =>
        replica.acquire({ requestId: nextId(), estimatedTokens: 1, accounts });
      const leaseOf = (result: Awaited<ReturnType<typeof acquire>>): AccountLease => {
        if (result.kind !== 'acquired') throw new Error(`not acquired: ${result.kind}`);
        return result.lease;
      };
      const first = leaseOf(await acquire(a));
      const second = leaseOf(await acquire(a)); // busy now: asks for a spare slot too
      first.release(1);
      second.release(1);
      await a.flush();
      expect(await slotsTaken(105)).toBe(1);
      const reused = await acquire(a);
      expect(reused).toMatchObject({ kind: 'acquired', roundTrip: false });
      leaseOf(reused).release(1);

      const burst = await Promise.all(Array.from({ length: 16 }, () => acquire(b)));
      expect(burst.filter((r) => r.kind === 'acquired')).toHaveLength(15);
      // a is idle: the sweep gives its spare slot back.
      await waitFor(async () => (await slotsTaken(105)) === 15, { what: "a's idle slot back" });
      expect((await acquire(b)).kind).toBe('acquired');
      expect((await acquire(b)).kind).toBe('saturated');
      await Promise.all([a.close(), b.close()]);
    });

    it('renews a block running low before it runs out: one request asks, the rest go on locally', async () => {
      // 16,000 a minute, tokens too: blocks of up to 256 requests, the account and the token.
      const limiter = new AccountLimiter(redis);
      const accounts = [account(109, { rpm: 16_000, tpm: 16_000_000 })];
      const token = { id: 7_003, rateLimit: 16_000 };
      const acquire = () =>
        limiter.acquire({ requestId: nextId(), estimatedTokens: 10, token, accounts });
      let admitted = 0;
      let roundTrips = 0;
      // 40 turns of 32 requests at once, 1,280 in all; the first two, before the demand
      // is known, ask Redis for every request, and are not counted.
      for (let turn = 0; turn < 40; turn += 1) {
        const results = await Promise.all(Array.from({ length: 32 }, acquire));
        for (const result of results) {
          expect(result.kind).toBe('acquired');
          if (result.kind !== 'acquired') continue;
          admitted += 1;
          if (result.roundTrip && turn >= 2) roundTrips += 1;
        }
        // Never more held ahead than a block: the log counts what was served and the spare.
        const held = (await logSize(109)) - admitted;
        expect(held).toBeGreaterThanOrEqual(0);
        expect(held).toBeLessThanOrEqual(256);
      }
      // One a block, the account's and the token's renewed together (8 when written). Without
      // renewal each block ran out with a turn's requests still to come, and every one of
      // them asked Redis for itself: 160 round trips here.
      expect(roundTrips).toBeLessThanOrEqual(24);
      await limiter.close();
      expect(await logSize(109)).toBe(admitted);
      expect(await redis.zcard(`{lim}:t:${token.id}:rpm`)).toBe(admitted);
    });

    it('spends what it holds when the renewal finds no room left in Redis', async () => {
      // 1,600 a minute: blocks of up to 100. A holds a block; B then takes all the room left.
      const accounts = [account(110, { rpm: 1_600 })];
      const a = new AccountLimiter(redis);
      const b = new AccountLimiter(other);
      const acquire = (replica: AccountLimiter) =>
        replica.acquire({ requestId: nextId(), estimatedTokens: 1, accounts });
      let admittedByA = 0;
      for (let turn = 0; turn < 3; turn += 1) {
        const results = await Promise.all(Array.from({ length: 16 }, () => acquire(a)));
        admittedByA += results.filter((r) => r.kind === 'acquired').length;
      }
      expect(admittedByA).toBe(48);
      const heldByA = (await logSize(110)) - admittedByA;
      expect(heldByA).toBeGreaterThan(25);
      let admittedByB = 0;
      while ((await acquire(b)).kind === 'acquired') admittedByB += 1;
      expect(await logSize(110)).toBe(1_600);
      // A's renewals find no room: every unit A holds still serves a request, then no more.
      let more = 0;
      while ((await acquire(a)).kind === 'acquired') more += 1;
      expect(more).toBe(heldByA);
      expect(admittedByA + more + admittedByB).toBe(1_600);
      await Promise.all([a.close(), b.close()]);
    });

    it('gives everything back at shutdown', async () => {
      const limiter = new AccountLimiter(redis);
      const accounts = [account(106, { rpm: 16_000, tpm: 1_600_000, concurrency: 160 })];
      const leases: AccountLease[] = [];
      for (let round = 0; round < 10; round += 1) {
        const results = await Promise.all(
          Array.from({ length: 5 }, () =>
            limiter.acquire({ requestId: nextId(), estimatedTokens: 100, accounts }),
          ),
        );
        for (const result of results) if (result.kind === 'acquired') leases.push(result.lease);
      }
      expect(leases).toHaveLength(50);
      for (const lease of leases) lease.release(40);
      await limiter.flush();
      expect(await logSize(106)).toBeGreaterThan(50);
      expect(await slotsTaken(106)).toBeGreaterThan(0);
      await limiter.close();
      expect(await logSize(106)).toBe(50);
      expect(await tokensCharged(106)).toBe(50 * 40);
      expect(await slotsTaken(106)).toBe(0);
    });
  });

  it('keeps its keys inside the namespace', async () => {
    const { inside, outside } = await spec.keys('{lim}:*');
    expect(inside.length).toBeGreaterThan(0);
    expect(outside).toEqual([]);
  });
});
