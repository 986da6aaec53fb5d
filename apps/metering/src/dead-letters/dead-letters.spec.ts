import { type UsageRecord } from '@switchyard/contracts';
import { type Job } from 'bullmq';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { repositoryRoot } from '@switchyard/testing';
import { type UsageQueue } from '@switchyard/messaging';
import {
  createToken,
  deadLettered,
  dropNamespace,
  enqueue,
  fileNamespace,
  meteringEnv,
  metric,
  settled,
  startMetering,
  tokenState,
  usageQueue,
  usageRecord,
  type RunningMetering,
} from '../testing/metering.fixture.js';
import { type DeadLetterPage } from './dead-letters.js';

// The operator's side: invalid usage lands in the dead-letter list at once, the built CLI
// (dist/cli.js, run as a process like an operator would) lists and replays it.

const run = promisify(execFile);
const CLI = path.join(repositoryRoot, 'apps/metering/dist/cli.js');

describe('dead letters', () => {
  let metering: RunningMetering;
  let queue: UsageQueue;

  const cli = async (...args: string[]) => {
    try {
      const { stdout } = await run(process.execPath, [CLI, 'dead-letters', ...args], {
        env: { ...process.env, REDIS_PREFIX: metering.env.REDIS_PREFIX, LOG_LEVEL: 'silent' },
      });
      return { code: 0, stdout };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout + failed.stderr };
    }
  };

  beforeAll(async () => {
    metering = await startMetering(meteringEnv(fileNamespace()));
    queue = usageQueue(metering.env);
  });

  afterAll(async () => {
    await metering?.close();
    await queue?.close();
    if (metering) await dropNamespace(metering.env);
  });

  it('sends an invalid job to the dead-letter list without retrying it, and replays it once fixed', async () => {
    const token = await createToken(10n ** 9n);
    const valid = usageRecord({ tokenId: token.id, model: 'gpt-4o-mini' });
    // What a broken producer could send: the type says it cannot, the worker must not trust it.
    const broken = { ...valid, tokenId: 'seven', requestedAt: undefined } as unknown as UsageRecord;
    await queue.add('usage', broken, {
      attempts: 8,
      jobId: valid.requestId,
      removeOnComplete: true,
    });
    const failed = await deadLettered(queue, valid.requestId);
    expect(failed.attemptsMade).toBe(1);
    expect(failed.failedReason).toMatch(/invalid usage record: .*tokenId.*requestedAt/);
    expect(await metric(metering.url, 'metering_dead_letters')).toBe(1);

    const listed = await cli('list', '--json');
    expect(listed.code).toBe(0);
    const page = JSON.parse(listed.stdout) as DeadLetterPage;
    expect(page.total).toBe(1);
    expect(page.items[0]).toMatchObject({ id: valid.requestId, attempts: 1, model: 'gpt-4o-mini' });
    expect((await cli('list')).stdout).toContain(valid.requestId);

    // Replayed as it is, it fails again at once: nothing is billed.
    expect((await cli('replay', '--id', valid.requestId)).stdout).toContain('replayed');
    await deadLettered(queue, valid.requestId);
    expect((await tokenState(token.id)).usedQuota).toBe('0');

    // The operator fixes the record, then replays it: billed once.
    await (failed as Job<UsageRecord>).updateData(valid);
    expect((await cli('replay', '--id', valid.requestId)).code).toBe(0);
    await settled(queue, [valid.requestId]);
    // gpt-4o-mini: 10 prompt tokens at $0.15 and 20 completion tokens at $0.60 per million.
    expect((await tokenState(token.id)).usedQuota).toBe('14');
    expect(await cli('replay', '--id', valid.requestId)).toMatchObject({ code: 1 });

    // The edge's spool delivers the same request once more: still billed once.
    await settled(queue, await enqueue(queue, [valid]));
    expect((await tokenState(token.id)).usedQuota).toBe('14');
  });

  it('treats values that cannot be stored as invalid, and replays every dead letter at once', async () => {
    const token = await createToken(null);
    const tooSlow = usageRecord({ tokenId: token.id, latencyMs: 3_000_000_000 });
    const tooLong = usageRecord({
      tokenId: token.id,
      usage: { promptTokens: 2 ** 31, completionTokens: 0 },
    });
    // In one batch: each is set aside from it and dead-lettered alone, under its request id.
    await enqueue(queue, [tooSlow, tooLong]);
    expect((await deadLettered(queue, tooSlow.requestId)).failedReason).toContain('latencyMs');
    expect((await deadLettered(queue, tooLong.requestId)).failedReason).toContain('promptTokens');

    for (const record of [tooSlow, tooLong]) {
      const job = await queue.getJob(record.requestId);
      await (job as Job<UsageRecord> | undefined)?.updateData({
        ...record,
        latencyMs: 1,
        usage: { promptTokens: 1, completionTokens: 1 },
      });
    }
    expect((await cli('replay', '--all')).stdout).toContain('replayed 2 dead letter(s)');
    await settled(queue, [tooSlow.requestId, tooLong.requestId]);
    expect((await cli('list', '--json')).stdout).toContain('"total": 0');
  });

  it('refuses a replay without a target', async () => {
    expect(await cli('replay')).toMatchObject({ code: 1 });
    expect(await cli('replay', '--id', 'x', '--all')).toMatchObject({ code: 1 });
    expect(await cli('nothing')).toMatchObject({ code: 1 });
  });
});
