import { appendFile, mkdir, readdir, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { type UsageRecord } from '@switchyard/contracts';

// Usage records that could not reach Redis wait here, one JSON line each, until they can
// be replayed. A file is renamed before it is replayed, so records spooled meanwhile go to
// a new file and nothing is read twice or lost.

export class UsageSpool {
  private readonly file: string;

  constructor(private readonly directory: string) {
    this.file = path.join(directory, `usage-${process.pid}.jsonl`);
  }

  async append(records: UsageRecord[]): Promise<void> {
    await mkdir(this.directory, { recursive: true });
    await appendFile(this.file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  }

  /** Hands every spooled record to `replay`, oldest file first; a file is deleted once replayed. */
  async drain(replay: (records: UsageRecord[]) => Promise<void>): Promise<number> {
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
    replay: (records: UsageRecord[]) => Promise<void>,
  ): Promise<void> {
    const lines = (await readFile(file, 'utf8')).split('\n').filter((line) => line.trim() !== '');
    const records = lines.flatMap((line) => {
      try {
        return [JSON.parse(line) as UsageRecord];
      } catch {
        return [];
      }
    });
    for (let i = 0; i < records.length; i += 500) await replay(records.slice(i, i + 500));
    await unlink(file);
  }
}
