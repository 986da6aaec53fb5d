import { once } from 'node:events';
import { createRedisClient, type RedisClient, type UsageQueue } from '@switchyard/messaging';
import { SpendLedger, spendAccount, spendKeys } from '@switchyard/spend';
import {
  createToken,
  dropNamespace,
  enqueue,
  fileNamespace,
  meteringEnv,
  setPrice,
  settled,
  startMetering,
  usageQueue,
  usageRecord,
  type RunningMetering,
} from '../testing/metering.fixture.js';

// Metering's half of spend holds (docs/architecture.md, "Spend holds"): once a request's
// usage is committed, its hold becomes settled spend, once however often it is delivered.

describe('metering: spend holds settle with the usage', () => {
  let metering: RunningMetering;
  let queue: UsageQueue;
  let redis: RedisClient;
  let ledger: SpendLedger;

  beforeAll(async () => {
    // A micro-dollar a prompt token, two a completion token.
    await setPrice('sp-model', 1_000_000, 2_000_000);
    const env = meteringEnv(fileNamespace());
    metering = await startMetering(env);
    queue = usageQueue(env);
    redis = createRedisClient({ url: env.REDIS_URL, prefix: env.REDIS_PREFIX });
    if (redis.status !== 'ready') await once(redis, 'ready');
    ledger = new SpendLedger(redis);
  });

  afterAll(async () => {
    await metering?.close();
    await queue?.close();
    redis?.disconnect();
    if (metering) await dropNamespace(metering.env);
  });

  const held = async (account: string) =>
    Number((await redis.hget(spendKeys(account).holds, '#held')) ?? 0);
  const settledSpend = (account: string) => redis.get(spendKeys(account).settled);
  /** The store of record's spend, for a ledger that has no copy yet: a new token's. */
  const zero = () => Promise.resolve([0]);

  it('drops the hold and raises the settled spend to the used quota, once across redeliveries', async () => {
    const token = await createToken(1_000_000n);
    const account = spendAccount('token', token.id);
    const record = usageRecord({
      tokenId: token.id,
      model: 'sp-model',
      usage: { promptTokens: 100, completionTokens: 50 },
    });
    const other = usageRecord({ tokenId: token.id, model: 'sp-model' });
    for (const id of [record.requestId, other.requestId])
      await ledger.reserve(id, [{ account, limit: 1_000_000, amount: 5_000 }], () =>
        Promise.resolve([0]),
      );
    expect(await held(account)).toBe(10_000);

    await settled(queue, await enqueue(queue, [record]));
    expect(await held(account)).toBe(5_000);
    expect(await settledSpend(account)).toBe('200');

    // The same batch again (a spool replay): nothing more is settled.
    await settled(queue, await enqueue(queue, [record]));
    expect(await settledSpend(account)).toBe('200');
    expect(await held(account)).toBe(5_000);
  });

  it('releases the hold of a failed request, which costs nothing', async () => {
    const token = await createToken(1_000n);
    const account = spendAccount('token', token.id);
    const failed = usageRecord({
      tokenId: token.id,
      model: 'sp-model',
      status: 502,
      errorCode: 'upstream_error',
      usage: null,
    });
    await ledger.reserve(failed.requestId, [{ account, limit: 1_000, amount: 1_000 }], zero);
    await settled(queue, await enqueue(queue, [failed]));
    expect(await held(account)).toBe(0);
    expect(await settledSpend(account)).toBe('0');
  });

  it('settles a duplicate whose first settlement never reached the ledger', async () => {
    const token = await createToken(1_000_000n);
    const account = spendAccount('token', token.id);
    const record = usageRecord({
      tokenId: token.id,
      model: 'sp-model',
      usage: { promptTokens: 10, completionTokens: 0 },
    });
    await settled(queue, await enqueue(queue, [record]));
    // As if Redis had lost the first settlement: the hold is back, the copy gone.
    await ledger.reserve(record.requestId, [{ account, limit: 1_000_000, amount: 900 }], () =>
      Promise.resolve([0]),
    );
    await redis.del(spendKeys(account).settled);
    await settled(queue, await enqueue(queue, [record]));
    expect(await held(account)).toBe(0);
    expect(await settledSpend(account)).toBe('10');
  });
});
