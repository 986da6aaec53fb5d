import { appendFile, mkdir, readdir, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { USAGE_BATCH_MAX_RECORDS, type UsageRecord } from '@switchyard/contracts';

// Usage records that could not reach Redis wait here, one batch a JSON line, until they
// can be replayed. A batch is replayed as it was spooled, so it becomes the job its first
// attempt would have been (the job id is derived from the batch): had Redis taken it
// after all, the replay adds nothing. A file is renamed before it is replayed, so records
// spooled meanwhile go to a new file and nothing is read twice or lost.

export class UsageSpool {
  private readonly file: string;

  constructor(private readonly directory: string) {
    this.file = path.join(directory, `usage-${process.pid}.jsonl`);
  }

  async append(batch: UsageRecord[]): Promise<void> {
    await mkdir(this.directory, { recursive: true });
    await appendFile(this.file, `${JSON.stringify(batch)}\n`);
  }

  /** Hands every spooled batch to `replay`, oldest file first; a file is deleted once replayed. */
  async drain(replay: (batch: UsageRecord[]) => Promise<void>): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch {
      return 0;
    }
    let replayed = 0;
    for (const name of names.filter((n) => n.endsWith('.jsonl')).sort()) {
      const claimed = path.join(this.directory, `${name}.${Date.now()}.replaying`);
      await rename(path.join(this.directory, name), claimed);
      await this.replayFile(claimed, replay);
      replayed += 1;
    }
    for (const name of names.filter((n) => n.endsWith('.replaying')).sort()) {
      await this.replayFile(path.join(this.directory, name), replay);
    }
    return replayed;
  }

  private async replayFile(
    file: string,
    replay: (batch: UsageRecord[]) => Promise<void>,
  ): Promise<void> {
    const lines = (await readFile(file, 'utf8')).split('\n').filter((line) => line.trim() !== '');
    const batches: UsageRecord[][] = [];
    // Edges before batched jobs spooled one record a line: those are gathered into batches.
    let loose: UsageRecord[] = [];
    for (const line of lines) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        continue;
      }
      if (Array.isArray(parsed)) batches.push(parsed as UsageRecord[]);
      else if (typeof parsed === 'object' && parsed !== null) loose.push(parsed as UsageRecord);
      if (loose.length === USAGE_BATCH_MAX_RECORDS) {
        batches.push(loose);
        loose = [];
      }
    }
    if (loose.length > 0) batches.push(loose);
    for (const batch of batches) {
      for (let i = 0; i < batch.length; i += USAGE_BATCH_MAX_RECORDS) {
        await replay(batch.slice(i, i + USAGE_BATCH_MAX_RECORDS));
      }
    }
    await unlink(file);
  }
}
