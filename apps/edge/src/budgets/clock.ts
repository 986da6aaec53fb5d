import { readFileSync } from 'node:fs';

// The edge's time for budgets (docs/budgets.md, "Testing periods"): the time a request
// arrives (its `requestedAt`, which picks the budget periods it counts in, here and in
// metering) and the time its holds are taken at (which ages holds out). Without
// TEST_CLOCK_FILE it is `Date.now()`. With it (a test hook the configuration refuses in
// production) the file's number of milliseconds is added, read again at every call, so an
// end-to-end test moves every edge past a period's end, or past a crashed edge's holds'
// expiry, by writing one file, without sleeping.

export class Clock {
  constructor(private readonly offsetFile?: string) {}

  now(): number {
    return this.offsetFile === undefined ? Date.now() : Date.now() + this.offset();
  }

  private offset(): number {
    let text: string;
    try {
      text = readFileSync(this.offsetFile!, 'utf8');
    } catch {
      return 0;
    }
    const offset = Number(text.trim() || '0');
    return Number.isSafeInteger(offset) ? offset : 0;
  }
}
