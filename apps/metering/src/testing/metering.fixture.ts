import { randomBytes, randomUUID } from 'node:crypto';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, MeteringEnv } from '@switchyard/config';
import {
  USAGE_BATCH_MAX_RECORDS,
  type QueueJobOptions,
  type UsageRecord,
} from '@switchyard/contracts';
import { QueueConnection, UsageQueue, busConnectionOf } from '@switchyard/messaging';
import { createLogger } from '@switchyard/observability';
import { createService } from '@switchyard/service';
import { clearRedisNamespace, query, WAIT_TIMEOUT_MS, waitFor } from '@switchyard/testing';
import { meteringDefinition } from '../metering.definition.js';

// What the metering specs share: the app built as main.ts builds it, a producer that
// enqueues usage exactly as the edge does, and rows to bill against. Each spec file gets
// a Redis namespace of its own (its queues never meet another file's) and makes its own
// tokens and channels in the run's database.

export function databaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: run the specs through jest.config.mjs');
  return url;
}

/** The run's namespace plus a suffix, so spec files never share a queue. */
export function fileNamespace(): string {
  return `${process.env.REDIS_PREFIX ?? 't'}-${randomBytes(3).toString('hex')}`.slice(0, 32);
}

export function meteringEnv(prefix: string, overrides: Record<string, string> = {}): MeteringEnv {
  return loadEnvironment(MeteringEnv, {
    ...process.env,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'silent',
    ...overrides,
  });
}

export interface RunningMetering {
  app: NestFastifyApplication;
  env: MeteringEnv;
  url: string;
  close(): Promise<void>;
}

export async function startMetering(env: MeteringEnv): Promise<RunningMetering> {
  const app = await createService(
    meteringDefinition,
    env,
    createLogger({ service: 'metering', level: env.LOG_LEVEL }),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return { app, env, url, close: () => app.close() };
}

/** The producer side: the usage queue as the edge opens it. */
export function usageQueue(env: MeteringEnv): UsageQueue {
  return UsageQueue.open(new QueueConnection(busConnectionOf(env)));
}

export async function dropNamespace(env: MeteringEnv): Promise<void> {
  await clearRedisNamespace(env.REDIS_URL, env.REDIS_PREFIX);
}

export function usageRecord(overrides: Partial<UsageRecord> = {}): UsageRecord {
  return {
    requestId: `req-${randomUUID()}`,
    tokenId: 0,
    channelId: null,
    keyId: null,
    endpoint: 'chat.completions',
    model: 'gpt-4o',
    upstreamModel: null,
    stream: false,
    status: 200,
    errorCode: null,
    usage: { promptTokens: 10, completionTokens: 20 },
    latencyMs: 120,
    firstByteMs: 40,
    attempts: 1,
    clientIp: '127.0.0.1',
    requestedAt: Date.now(),
    ...overrides,
  };
}

/** Enqueues as the edge does: batches of up to USAGE_BATCH_MAX_RECORDS; returns their job ids. */
export async function enqueue(
  queue: UsageQueue,
  records: UsageRecord[],
  options: Partial<QueueJobOptions> = {},
): Promise<string[]> {
  const jobIds: string[] = [];
  for (let start = 0; start < records.length; start += USAGE_BATCH_MAX_RECORDS) {
    jobIds.push(
      await queue.addBatch(records.slice(start, start + USAGE_BATCH_MAX_RECORDS), options),
    );
  }
  return jobIds;
}

/** Enqueues as edges before batches did: a job per record, job id = request id. */
export async function enqueueOneByOne(
  queue: UsageQueue,
  records: UsageRecord[],
  options: Partial<QueueJobOptions> = {},
): Promise<string[]> {
  await queue.addSingleRecords(
    records.map((record) => ({ jobId: record.requestId, data: record })),
    options,
  );
  return records.map((record) => record.requestId);
}

/**
 * Waits until the queue has nothing left to do, then checks that every one of the jobs
 * completed: usage jobs leave the queue on completion, so a job id no longer there was
 * settled, and one left in the failed set fails the wait.
 */
export async function settled(
  queue: UsageQueue,
  jobIds: string[],
  timeoutMs = WAIT_TIMEOUT_MS,
): Promise<void> {
  await waitFor(
    async () => {
      const counts = await queue.getJobCounts('waiting', 'prioritized', 'delayed', 'active');
      return Object.values(counts).every((n) => n === 0) ? true : undefined;
    },
    { timeoutMs, what: `${jobIds.length} usage job(s) settled` },
  );
  for (let start = 0; start < jobIds.length; start += 500) {
    const jobs = await Promise.all(jobIds.slice(start, start + 500).map((id) => queue.getJob(id)));
    const unsettled = jobs.find(
      (job) => job !== undefined && !(job.finishedOn && !job.failedReason),
    );
    if (unsettled) {
      throw new Error(
        `job ${unsettled.id} did not complete: ${unsettled.failedReason ?? 'still queued'}`,
      );
    }
  }
}

/** The job as it failed, once it is in the failed set (read after it got there). */
export async function deadLettered(queue: UsageQueue, jobId: string, timeoutMs = WAIT_TIMEOUT_MS) {
  return waitFor(
    async () => ((await queue.getJobState(jobId)) === 'failed' ? queue.getJob(jobId) : undefined),
    { timeoutMs, what: `job ${jobId} dead-lettered` },
  );
}

export async function createToken(quota: bigint | null, name = 'test token') {
  const keyHash = randomBytes(32).toString('hex');
  const [row] = await query<{ id: number }>(
    databaseUrl(),
    `INSERT INTO "Token" ("name", "keyHash", "lastFour", "quota", "updatedAt")
     VALUES ($1, $2, 'abcd', $3, now()) RETURNING "id"`,
    [name, keyHash, quota === null ? null : quota.toString()],
  );
  if (!row) throw new Error('no token created');
  return { id: row.id, keyHash };
}

export async function createChannel(keys = 2): Promise<{ id: number; keyIds: number[] }> {
  const [channel] = await query<{ id: number }>(
    databaseUrl(),
    `INSERT INTO "Channel" ("name", "kind", "baseUrl", "models", "updatedAt")
     VALUES ('test channel', 'single', 'http://127.0.0.1:1', ARRAY['gpt-4o'], now()) RETURNING "id"`,
  );
  if (!channel) throw new Error('no channel created');
  const keyIds: number[] = [];
  for (let index = 0; index < keys; index += 1) {
    const [key] = await query<{ id: number }>(
      databaseUrl(),
      `INSERT INTO "ChannelKey" ("channelId", "secretCiphertext", "fingerprint", "lastFour")
       VALUES ($1, 'sealed', $2, 'wxyz') RETURNING "id"`,
      [channel.id, randomBytes(32).toString('hex')],
    );
    if (key) keyIds.push(key.id);
  }
  return { id: channel.id, keyIds };
}

export async function setPrice(model: string, inputPrice: number, outputPrice: number) {
  await query(
    databaseUrl(),
    `INSERT INTO "ModelPrice" ("model", "inputPrice", "outputPrice", "updatedAt")
     VALUES ($1, $2, $3, now())
     ON CONFLICT ("model") DO UPDATE SET "inputPrice" = $2, "outputPrice" = $3, "updatedAt" = now()`,
    [model, inputPrice, outputPrice],
  );
}

export interface TokenState {
  status: string;
  quota: string | null;
  usedQuota: string;
}

export async function tokenState(id: number): Promise<TokenState> {
  const [row] = await query<TokenState>(
    databaseUrl(),
    `SELECT "status"::text AS "status", "quota"::text AS "quota", "usedQuota"::text AS "usedQuota"
     FROM "Token" WHERE "id" = $1`,
    [id],
  );
  if (!row) throw new Error(`no token ${id}`);
  return row;
}

/** The value of one Prometheus sample (its name and some of its labels), or undefined. */
export async function metric(
  url: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  const line = text
    .split('\n')
    .find(
      (l) =>
        (l.startsWith(`${name} `) || l.startsWith(`${name}{`)) &&
        wanted.every((label) => l.includes(label)),
    );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
