import { type UsageRecord } from '@switchyard/contracts';
import {
  EventBus,
  NamespacedRedisClient,
  busConnectionOf,
  type UsageQueue,
} from '@switchyard/messaging';
import { waitFor, query } from '@switchyard/testing';
import { countTokens as countCl100k } from 'gpt-tokenizer/encoding/cl100k_base';
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { Redis } from 'ioredis';
import {
  createChannel,
  createToken,
  databaseUrl,
  deadLettered,
  dropNamespace,
  enqueue,
  enqueueOneByOne,
  fileNamespace,
  meteringEnv,
  metric,
  setPrice,
  settled,
  startMetering,
  tokenState,
  usageQueue,
  usageRecord,
  type RunningMetering,
} from './testing/metering.fixture.js';
import { UsageProcessor } from './usage/usage.processor.js';

// The worker as the edge sees it: usage jobs go into the real queue in Redis, and what
// they billed is read back from Postgres.

const DEFAULT_PRICE = 700_000;
const PRICES = {
  'mt-exact': [1_000_000, 2_000_000],
  'mt-family*': [3_000_000, 4_000_000],
  'mt-family-large*': [5_000_000, 6_000_000],
} as const;

/** The expected price of these models, by the rule: the most specific entry, then default. */
function priceOf(model: string): readonly [number, number] {
  if (model === 'mt-exact') return PRICES['mt-exact'];
  if (model.startsWith('mt-family-large')) return PRICES['mt-family-large*'];
  if (model.startsWith('mt-family')) return PRICES['mt-family*'];
  return [DEFAULT_PRICE, DEFAULT_PRICE];
}

function expectedCost(model: string, prompt: number, completion: number): bigint {
  const [input, output] = priceOf(model);
  const total = BigInt(prompt) * BigInt(input) + BigInt(completion) * BigInt(output);
  return (total + 999_999n) / 1_000_000n;
}

interface LogRow {
  requestId: string;
  tokenId: number | null;
  channelId: number | null;
  channelKeyId: number | null;
  promptTokens: number;
  completionTokens: number;
  tokensCounted: boolean;
  cost: string;
}

async function logsOf(requestIds: string[]): Promise<LogRow[]> {
  return query<LogRow>(
    databaseUrl(),
    `SELECT "requestId", "tokenId", "channelId", "channelKeyId", "promptTokens",
            "completionTokens", "tokensCounted", "cost"::text AS "cost"
     FROM "UsageLog" WHERE "requestId" = ANY($1) ORDER BY "requestId"`,
    [requestIds],
  );
}

describe('metering worker', () => {
  let metering: RunningMetering;
  let queue: UsageQueue;
  let subscriber: Redis;
  const exhaustedEvents: { tokenId: number; keyHash: string }[] = [];

  beforeAll(async () => {
    for (const [model, [input, output]] of Object.entries(PRICES)) {
      await setPrice(model, input, output);
    }
    const env = meteringEnv(fileNamespace(), { DEFAULT_MODEL_PRICE: String(DEFAULT_PRICE) });
    metering = await startMetering(env);
    queue = usageQueue(env);
    subscriber = new Redis(env.REDIS_URL);
    await subscriber.subscribe(`${env.REDIS_PREFIX}:token.exhausted`);
    subscriber.on('message', (_channel: string, message: string) => {
      exhaustedEvents.push(
        (JSON.parse(message) as { data: (typeof exhaustedEvents)[number] }).data,
      );
    });
  });

  afterAll(async () => {
    await metering?.close();
    await queue?.close();
    subscriber?.disconnect();
    if (metering) await dropNamespace(metering.env);
  });

  it('settles quotas exactly over thousands of jobs across several tokens, channels and keys', async () => {
    const tokens = [
      await createToken(10n ** 15n),
      await createToken(10n ** 15n),
      await createToken(10n ** 15n),
      await createToken(null),
      await createToken(null),
    ];
    const channels = [await createChannel(2), await createChannel(2), await createChannel(2)];
    const models = ['mt-exact', 'mt-family-a', 'mt-family-large-b', 'mt-unpriced-x'];
    const records = Array.from({ length: 3_000 }, (_, index) => {
      const channel = channels[index % channels.length]!;
      const counted = index % 10 === 0;
      return usageRecord({
        tokenId: tokens[(index * 7) % tokens.length]!.id,
        channelId: channel.id,
        keyId: channel.keyIds[index % 2]!,
        model: models[(index * 3) % models.length]!,
        usage: counted
          ? null
          : { promptTokens: (index * 37) % 5_000, completionTokens: (index * 91) % 4_000 },
        promptText: counted ? `prompt number ${index} with some words` : undefined,
        completionText: counted ? `answer ${index}: ${'ok '.repeat(index % 17)}` : undefined,
        stream: counted,
      });
    });
    await settled(queue, await enqueue(queue, records), 60_000);

    const expected = new Map<string, bigint>();
    const add = (key: string, cost: bigint) => expected.set(key, (expected.get(key) ?? 0n) + cost);
    for (const record of records) {
      const prompt = record.usage?.promptTokens ?? countCl100k(record.promptText ?? '');
      const completion = record.usage?.completionTokens ?? countCl100k(record.completionText ?? '');
      const cost = expectedCost(record.model, prompt, completion);
      add(`token:${record.tokenId}`, cost);
      add(`channel:${record.channelId}`, cost);
      add(`key:${record.keyId}`, cost);
      add('all', cost);
    }

    const [logged] = await query<{ rows: number; cost: string }>(
      databaseUrl(),
      `SELECT count(*)::int AS "rows", sum("cost")::text AS "cost" FROM "UsageLog" WHERE "requestId" = ANY($1)`,
      [records.map((r) => r.requestId)],
    );
    expect(logged).toEqual({ rows: 3_000, cost: String(expected.get('all')) });

    const tokenRows = await query<{ id: number; usedQuota: string; logged: string }>(
      databaseUrl(),
      `SELECT t."id", t."usedQuota"::text AS "usedQuota",
              (SELECT sum(l."cost") FROM "UsageLog" l WHERE l."tokenId" = t."id")::text AS "logged"
       FROM "Token" t WHERE t."id" = ANY($1) ORDER BY t."id"`,
      [tokens.map((t) => t.id)],
    );
    for (const row of tokenRows) {
      expect(row.usedQuota).toBe(String(expected.get(`token:${row.id}`)));
      expect(row.logged).toBe(row.usedQuota);
    }
    expect(tokenRows).toHaveLength(tokens.length);

    const channelRows = await query<{ id: number; usedQuota: string; requestCount: string }>(
      databaseUrl(),
      `SELECT "id", "usedQuota"::text AS "usedQuota", "requestCount"::text AS "requestCount"
       FROM "Channel" WHERE "id" = ANY($1)`,
      [channels.map((c) => c.id)],
    );
    for (const row of channelRows) {
      expect(row.usedQuota).toBe(String(expected.get(`channel:${row.id}`)));
      expect(row.requestCount).toBe(String(records.filter((r) => r.channelId === row.id).length));
    }
    const keyRows = await query<{ id: number; usedQuota: string; requestCount: string }>(
      databaseUrl(),
      `SELECT "id", "usedQuota"::text AS "usedQuota", "requestCount"::text AS "requestCount"
       FROM "ChannelKey" WHERE "id" = ANY($1)`,
      [channels.flatMap((c) => c.keyIds)],
    );
    expect(keyRows).toHaveLength(6);
    for (const row of keyRows) {
      expect(row.usedQuota).toBe(String(expected.get(`key:${row.id}`)));
      expect(row.requestCount).toBe(String(records.filter((r) => r.keyId === row.id).length));
    }
    // Several jobs shared each transaction.
    expect(await metric(metering.url, 'metering_batch_size_count')).toBeLessThan(3_000);
  });

  it('bills a request once when it is delivered twice', async () => {
    const token = await createToken(10n ** 12n);
    const channel = await createChannel(1);
    const record = usageRecord({
      tokenId: token.id,
      channelId: channel.id,
      keyId: channel.keyIds[0]!,
      model: 'mt-exact',
      usage: { promptTokens: 1_000, completionTokens: 500 },
    });
    await settled(queue, await enqueue(queue, [record]));
    const duplicatesBefore =
      (await metric(metering.url, 'metering_records_settled_total', { result: 'duplicate' })) ?? 0;

    // The same batch again after it completed (an edge spool replay), and the same request
    // in two other batches and a job of its own at once (they may share a transaction).
    const again = await Promise.all([
      enqueue(queue, [record]),
      enqueue(queue, [record, usageRecord({ tokenId: token.id, usage: null })]),
      enqueue(queue, [usageRecord({ tokenId: token.id, usage: null }), record]),
      enqueueOneByOne(queue, [record]),
    ]);
    await settled(queue, again.flat());

    expect(await logsOf([record.requestId])).toHaveLength(1);
    expect((await tokenState(token.id)).usedQuota).toBe('2000'); // 1000 * $1 + 500 * $2 per million
    const [channelRow] = await query<{ usedQuota: string; requestCount: string }>(
      databaseUrl(),
      `SELECT "usedQuota"::text AS "usedQuota", "requestCount"::text AS "requestCount" FROM "Channel" WHERE "id" = $1`,
      [channel.id],
    );
    expect(channelRow).toEqual({ usedQuota: '2000', requestCount: '1' });
    expect(
      await metric(metering.url, 'metering_records_settled_total', { result: 'duplicate' }),
    ).toBe(duplicatesBefore + 4);
  });

  it('turns a limited token exhausted and announces it exactly when its quota runs out', async () => {
    const token = await createToken(1_000n);
    // mt-exact costs $1 per million prompt tokens: a micro-dollar per token.
    const job = (promptTokens: number) =>
      usageRecord({
        tokenId: token.id,
        model: 'mt-exact',
        usage: { promptTokens, completionTokens: 0 },
      });
    const first = [job(300), job(300), job(300)];
    await settled(queue, await enqueue(queue, first));
    expect(await tokenState(token.id)).toEqual({
      status: 'enabled',
      quota: '1000',
      usedQuota: '900',
    });

    const last = job(100);
    await settled(queue, await enqueue(queue, [last]));
    expect(await tokenState(token.id)).toEqual({
      status: 'exhausted',
      quota: '1000',
      usedQuota: '1000',
    });
    const announced = await waitFor(() => exhaustedEvents.find((e) => e.tokenId === token.id), {
      what: 'token.exhausted',
    });
    expect(announced).toEqual({ tokenId: token.id, keyHash: token.keyHash });

    // Requests already in flight still bill; the token is announced once.
    const late = job(50);
    await settled(queue, await enqueue(queue, [late]));
    expect((await tokenState(token.id)).usedQuota).toBe('1050');
    const other = await createToken(10n);
    const trigger = usageRecord({
      tokenId: other.id,
      model: 'mt-exact',
      usage: { promptTokens: 10, completionTokens: 0 },
    });
    await enqueue(queue, [trigger]);
    await waitFor(() => exhaustedEvents.find((e) => e.tokenId === other.id), { what: 'second' });
    expect(exhaustedEvents.filter((e) => e.tokenId === token.id)).toHaveLength(1);
  });

  it('lets unlimited tokens accumulate without ever exhausting them', async () => {
    const token = await createToken(null);
    const records = Array.from({ length: 50 }, () =>
      usageRecord({
        tokenId: token.id,
        model: 'mt-family-large-z',
        usage: { promptTokens: 100_000, completionTokens: 100_000 },
      }),
    );
    await settled(queue, await enqueue(queue, records));
    // 50 * (0.1 * $5 + 0.1 * $6) = $55.
    expect(await tokenState(token.id)).toEqual({
      status: 'enabled',
      quota: null,
      usedQuota: '55000000',
    });
    expect(exhaustedEvents.some((e) => e.tokenId === token.id)).toBe(false);
  });

  it('counts a stream without usage with the tokenizer of the model family', async () => {
    const token = await createToken(null);
    const promptText =
      'Explique la photosynthèse en trois phrases, s’il te plaît. 光合作用是什么？';
    const completionText = 'La capitale de la France est Paris. 🇫🇷 <|endoftext|>';
    const o200k = usageRecord({
      tokenId: token.id,
      model: 'gpt-4o',
      upstreamModel: 'gpt-4o-2024-08-06',
      stream: true,
      usage: null,
      promptText,
      completionText,
    });
    const cl100k = usageRecord({
      tokenId: token.id,
      model: 'gpt-3.5-turbo',
      stream: true,
      usage: null,
      promptText,
      completionText,
    });
    const image = usageRecord({
      tokenId: token.id,
      endpoint: 'images.generations',
      model: 'dall-e-3',
      usage: null,
      promptText: 'a lighthouse at dawn',
      imageCount: 2,
    });
    await settled(queue, await enqueue(queue, [o200k, cl100k, image]));

    const plain = { disallowedSpecial: new Set<string>() };
    const rows = new Map(
      (await logsOf([o200k.requestId, cl100k.requestId, image.requestId])).map((r) => [
        r.requestId,
        r,
      ]),
    );
    const o200kPrompt = countO200k(promptText, plain);
    const o200kCompletion = countO200k(completionText, plain);
    expect(rows.get(o200k.requestId)).toMatchObject({
      promptTokens: o200kPrompt,
      completionTokens: o200kCompletion,
      tokensCounted: true,
      // gpt-4o* from the shipped price table: $2.50 and $10 per million.
      cost: String(
        (BigInt(o200kPrompt) * 2_500_000n + BigInt(o200kCompletion) * 10_000_000n + 999_999n) /
          1_000_000n,
      ),
    });
    expect(rows.get(cl100k.requestId)).toMatchObject({
      promptTokens: countCl100k(promptText, plain),
      completionTokens: countCl100k(completionText, plain),
      tokensCounted: true,
    });
    expect(o200kPrompt).not.toBe(countCl100k(promptText, plain));
    // dall-e-3: two images at $0.04 each, the prompt free.
    expect(rows.get(image.requestId)).toMatchObject({
      completionTokens: 2_000,
      tokensCounted: true,
      cost: '80000',
    });
  });

  it('stores usage of deleted tokens, channels and keys without their ids', async () => {
    const record = usageRecord({
      tokenId: 2_000_000_000,
      channelId: 2_000_000_000,
      keyId: 2_000_000_000,
    });
    await settled(queue, await enqueue(queue, [record]));
    expect(await logsOf([record.requestId])).toEqual([
      expect.objectContaining({ tokenId: null, channelId: null, channelKeyId: null, cost: '225' }),
    ]);
  });

  it('reads prices again when told a price changed', async () => {
    const client = new NamespacedRedisClient(busConnectionOf(metering.env));
    const bus = new EventBus(client);
    const token = await createToken(null);
    const priced = () =>
      usageRecord({
        tokenId: token.id,
        model: 'mt-repriced',
        usage: { promptTokens: 1_000_000, completionTokens: 0 },
      });
    const before = priced();
    await settled(queue, await enqueue(queue, [before]));
    expect((await logsOf([before.requestId]))[0]?.cost).toBe(String(DEFAULT_PRICE));

    await setPrice('mt-repriced', 42_000, 0);
    await bus.publish('price.changed', { model: 'mt-repriced' });
    await waitFor(
      async () => {
        const probe = priced();
        await settled(queue, await enqueue(queue, [probe]));
        return (await logsOf([probe.requestId]))[0]?.cost === '42000' ? true : undefined;
      },
      { what: 'the new price applied' },
    );
    await client.close();
  });

  it('exposes queue depth, lag and settled records at /metrics', async () => {
    const billedBefore =
      (await metric(metering.url, 'metering_records_settled_total', { result: 'billed' })) ?? 0;
    const worker = metering.app.get(UsageProcessor).worker;
    await worker.pause();
    try {
      const old = usageRecord({ requestedAt: Date.now() - 90_000 });
      const fresh = usageRecord();
      const batch = await enqueue(queue, [fresh, old]);
      expect(await metric(metering.url, 'metering_queue_depth')).toBe(1);
      // A batch's lag is read from its id; a job of one record's from its data.
      const lag = await metric(metering.url, 'metering_lag_seconds');
      expect(lag).toBeGreaterThanOrEqual(90);
      expect(lag).toBeLessThan(100);
      const older = await enqueueOneByOne(queue, [
        usageRecord({ requestedAt: Date.now() - 120_000 }),
      ]);
      expect(await metric(metering.url, 'metering_queue_depth')).toBe(2);
      expect(await metric(metering.url, 'metering_lag_seconds')).toBeGreaterThanOrEqual(120);
      await worker.resume();
      await settled(queue, [...batch, ...older]);
    } finally {
      await worker.resume();
    }
    await waitFor(
      async () => ((await metric(metering.url, 'metering_queue_depth')) === 0 ? true : undefined),
      { what: 'empty queue' },
    );
    expect(await metric(metering.url, 'metering_lag_seconds')).toBe(0);
    expect(await metric(metering.url, 'metering_records_settled_total', { result: 'billed' })).toBe(
      billedBefore + 3,
    );
    expect(await metric(metering.url, 'metering_database_reachable')).toBe(1);
    expect(await metric(metering.url, 'metering_dead_letters')).toBe(0);
  });

  it('fails only the record the database refuses, never its batch companions', async () => {
    const url = databaseUrl();
    await query(
      url,
      `CREATE OR REPLACE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW."requestId" LIKE 'poison-%' THEN RAISE EXCEPTION 'poisoned usage row'; END IF;
         RETURN NEW;
       END $$`,
    );
    await query(
      url,
      `CREATE TRIGGER refuse_poison BEFORE INSERT ON "UsageLog" FOR EACH ROW EXECUTE FUNCTION refuse_poison()`,
    );
    try {
      const token = await createToken(null);
      const good = Array.from({ length: 60 }, () =>
        usageRecord({
          tokenId: token.id,
          model: 'mt-exact',
          usage: { promptTokens: 10, completionTokens: 0 },
        }),
      );
      const poison = usageRecord({ requestId: `poison-${good.length}`, tokenId: token.id });
      const batch = await enqueue(queue, [...good.slice(0, 30), poison, ...good.slice(30)], {
        attempts: 2,
        backoff: { type: 'fixed', delay: 50 },
      });
      // The batch completes; the refused record, set aside as a job of its own with the
      // batch's retries, fails them and waits in the dead-letter list alone.
      await settled(queue, batch);
      const failed = await deadLettered(queue, poison.requestId);
      expect(failed.data).toEqual(poison);
      expect(failed.failedReason).toContain('poisoned usage row');
      expect(failed.attemptsMade).toBe(2);
      expect(await logsOf(good.map((r) => r.requestId))).toHaveLength(60);
      expect((await tokenState(token.id)).usedQuota).toBe('600');
      expect(await metric(metering.url, 'metering_dead_letters')).toBe(1);
      await failed.remove();
    } finally {
      await query(url, `DROP TRIGGER IF EXISTS refuse_poison ON "UsageLog"`);
      await query(url, `DROP FUNCTION IF EXISTS refuse_poison()`);
    }
  });

  it('bills the rest of a batch and dead-letters its one malformed record alone', async () => {
    const token = await createToken(null);
    const good = Array.from({ length: 40 }, () =>
      usageRecord({
        tokenId: token.id,
        model: 'mt-exact',
        usage: { promptTokens: 10, completionTokens: 0 },
      }),
    );
    const malformed = { ...usageRecord({ tokenId: token.id }), usage: { promptTokens: 'ten' } };
    const nameless = { tokenId: token.id, model: 'mt-exact' };
    const batch = await enqueue(queue, [
      ...good.slice(0, 20),
      malformed as unknown as UsageRecord,
      ...good.slice(20),
      nameless as unknown as UsageRecord,
    ]);
    await settled(queue, batch);

    expect(await logsOf(good.map((r) => r.requestId))).toHaveLength(40);
    expect(await logsOf([malformed.requestId])).toHaveLength(0);
    expect((await tokenState(token.id)).usedQuota).toBe('400');
    // Under its request id when it has one, else under its place in the batch.
    const byRequestId = await deadLettered(queue, malformed.requestId);
    expect(byRequestId.data).toEqual(malformed);
    expect(byRequestId.attemptsMade).toBe(1);
    expect(byRequestId.failedReason).toContain(
      'invalid usage record: UsageRecord has invalid fields: usage',
    );
    const byPlace = await deadLettered(queue, `${batch[0]}-41`);
    expect(byPlace.data).toEqual(nameless);
    expect(await metric(metering.url, 'metering_dead_letters')).toBe(2);
    await byRequestId.remove();
    await byPlace.remove();
  });

  it('settles jobs of one record (edges before batches) and batches side by side, each request once', async () => {
    const token = await createToken(null);
    const records = Array.from({ length: 300 }, () =>
      usageRecord({
        tokenId: token.id,
        model: 'mt-exact',
        usage: { promptTokens: 7, completionTokens: 0 },
      }),
    );
    // The first 200 as an older edge queued them, the last 200 in batches: 100 in both.
    const [single, batches] = await Promise.all([
      enqueueOneByOne(queue, records.slice(0, 200)),
      enqueue(queue, records.slice(100)),
    ]);
    await settled(queue, [...single, ...batches]);
    expect(await logsOf(records.map((r) => r.requestId))).toHaveLength(300);
    expect((await tokenState(token.id)).usedQuota).toBe(String(300 * 7));
  });
});
