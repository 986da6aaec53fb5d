import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { USAGE_BATCH_MAX_RECORDS, type UsageRecord } from '@switchyard/contracts';
import { UsageSpool } from './usage-spool.js';

function record(requestId: string): UsageRecord {
  return {
    requestId,
    tokenId: 1,
    channelId: 2,
    keyId: 3,
    endpoint: 'chat.completions',
    model: 'm',
    upstreamModel: 'm',
    stream: false,
    status: 200,
    errorCode: null,
    usage: { promptTokens: 1, completionTokens: 2 },
    latencyMs: 5,
    firstByteMs: 4,
    attempts: 1,
    clientIp: '127.0.0.1',
    requestedAt: 1,
  };
}

describe('UsageSpool', () => {
  it('replays every spooled batch once, as it was spooled, and removes what it replayed', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'spool-'));
    const spool = new UsageSpool(directory);
    await spool.append([record('a'), record('b')]);
    await spool.append([record('c')]);
    const replayed: string[][] = [];
    await spool.drain((batch) => {
      replayed.push(batch.map((r) => r.requestId));
      return Promise.resolve();
    });
    expect(replayed).toEqual([['a', 'b'], ['c']]);
    expect(await readdir(directory)).toEqual([]);
    await spool.drain(() => Promise.reject(new Error('nothing left to replay')));
  });

  it('keeps a file whose replay failed, and replays it next time', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'spool-'));
    const spool = new UsageSpool(directory);
    await spool.append([record('a')]);
    await expect(
      spool.drain(async () => Promise.reject(new Error('Redis still away'))),
    ).rejects.toThrow('Redis still away');
    await spool.append([record('b')]);
    const replayed: string[] = [];
    await spool.drain((records) => {
      replayed.push(...records.map((r) => r.requestId));
      return Promise.resolve();
    });
    expect(replayed.sort()).toEqual(['a', 'b']);
    expect(await readdir(directory)).toEqual([]);
  });

  it('replays the one-record lines of an older edge in batches metering accepts', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'spool-'));
    const loose = Array.from({ length: USAGE_BATCH_MAX_RECORDS + 20 }, (_, i) =>
      record(`old-${i}`),
    );
    await writeFile(
      path.join(directory, 'usage-1.jsonl'),
      `${loose.map((r) => JSON.stringify(r)).join('\n')}\nnot json, cut short by a crash {"req\n`,
    );
    const replayed: string[][] = [];
    await new UsageSpool(directory).drain((batch) => {
      replayed.push(batch.map((r) => r.requestId));
      return Promise.resolve();
    });
    expect(replayed.map((batch) => batch.length)).toEqual([USAGE_BATCH_MAX_RECORDS, 20]);
    expect(replayed.flat()).toEqual(loose.map((r) => r.requestId));
    expect(await readdir(directory)).toEqual([]);
  });
});
