import { waitFor } from '@switchyard/testing';
import { MicroBatcher, StoreUnavailableError, type BatchWriter } from './micro-batcher.js';

// The batching rules on their own, against a store kept in memory whose availability and
// refusals each test controls. The real store (Postgres) is exercised in metering.spec.ts
// and postgres-outage.spec.ts.

class MemoryStore implements BatchWriter<number, string> {
  reachable = true;
  /** Items the store refuses as long as they are in the batch. */
  readonly refused = new Set<number>();
  transientFailures = 0;
  readonly batches: number[][] = [];
  readonly written: number[] = [];

  async write(items: number[]): Promise<string[]> {
    await new Promise((resolve) => setTimeout(resolve, 2));
    if (!this.reachable) throw new Error('connection refused');
    if (this.transientFailures > 0) {
      this.transientFailures -= 1;
      throw Object.assign(new Error('deadlock detected'), { transient: true });
    }
    if (items.some((item) => this.refused.has(item))) throw new Error('refused');
    this.batches.push(items);
    this.written.push(...items);
    return items.map((item) => `ok:${item}`);
  }

  isReachable(): Promise<boolean> {
    return Promise.resolve(this.reachable);
  }

  isTransient(error: unknown): boolean {
    return (error as { transient?: boolean }).transient === true;
  }
}

const options = {
  maxSize: 10,
  maxWaitMs: 5,
  maxInFlight: 2,
  outageRetryMs: { min: 5, max: 20 },
  transientRetries: 2,
};

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('MicroBatcher', () => {
  it('writes items together, never more than a batch at once, and answers each its own result', async () => {
    const store = new MemoryStore();
    const batcher = new MicroBatcher(store, options);
    const results = await Promise.all(range(35).map((i) => batcher.submit(i)));
    expect(results).toEqual(range(35).map((i) => `ok:${i}`));
    expect(store.batches.every((batch) => batch.length <= 10)).toBe(true);
    expect(store.batches.length).toBeLessThan(35);
    expect(store.written.sort((a, b) => a - b)).toEqual(range(35));
  });

  it('writes at once when every submitter it can have is waiting, not after the wait', async () => {
    const store = new MemoryStore();
    const batcher = new MicroBatcher(store, { ...options, maxWaitMs: 60_000, maxSubmitters: 3 });
    const first = [...batcher.submitAll([1, 2]), ...batcher.submitAll([3])];
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Two of three submitters: still waiting for the third (or the minute).
    expect(store.batches).toEqual([]);
    const all = [...first, ...batcher.submitAll([4, 5])];
    expect(await Promise.all(all)).toEqual(['ok:1', 'ok:2', 'ok:3', 'ok:4', 'ok:5']);
    expect(store.batches).toEqual([[1, 2, 3, 4, 5]]);
    // Counted again from none: a lone submitter waits once more.
    const lone = batcher.submitAll([6]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(store.batches).toHaveLength(1);
    batcher.stop();
    expect(await Promise.all(lone)).toEqual(['ok:6']);
  });

  it('writes a lone item once the wait is over', async () => {
    const store = new MemoryStore();
    const batcher = new MicroBatcher(store, { ...options, maxWaitMs: 20 });
    await expect(batcher.submit(7)).resolves.toBe('ok:7');
    expect(store.batches).toEqual([[7]]);
  });

  it('fails only the item the store refuses; its companions are written', async () => {
    const store = new MemoryStore();
    store.refused.add(13);
    const batcher = new MicroBatcher(store, options);
    const outcomes = await Promise.allSettled(range(20).map((i) => batcher.submit(i)));
    const rejected = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [i] : []));
    expect(rejected).toEqual([13]);
    expect(store.written.sort((a, b) => a - b)).toEqual(range(20).filter((i) => i !== 13));
  });

  it('runs a batch again after a transient failure without failing it', async () => {
    const store = new MemoryStore();
    store.transientFailures = 2;
    const batcher = new MicroBatcher(store, options);
    await expect(batcher.submit(1)).resolves.toBe('ok:1');
    expect(store.batches).toEqual([[1]]);
  });

  it('holds everything while the store is unreachable and writes it all when it returns', async () => {
    const store = new MemoryStore();
    const outages: boolean[] = [];
    const batcher = new MicroBatcher(store, { ...options, onOutage: (down) => outages.push(down) });
    store.reachable = false;
    const settled = Promise.allSettled(range(50).map((i) => batcher.submit(i)));
    await waitFor(() => batcher.storeUnreachable, { what: 'the store found unreachable' });
    expect(batcher.size).toBe(50);
    store.reachable = true;
    const outcomes = await settled;
    expect(outcomes.every((o) => o.status === 'fulfilled')).toBe(true);
    expect(store.written.sort((a, b) => a - b)).toEqual(range(50));
    expect(outages).toEqual([true, false]);
    expect(batcher.size).toBe(0);
  });

  it('once stopping, gives back what it holds for an unreachable store instead of waiting', async () => {
    const store = new MemoryStore();
    const batcher = new MicroBatcher(store, options);
    store.reachable = false;
    const held = Promise.allSettled(range(25).map((i) => batcher.submit(i)));
    await waitFor(() => batcher.storeUnreachable, { what: 'the store found unreachable' });
    batcher.stop();
    const outcomes = await held;
    expect(
      outcomes.every((o) => o.status === 'rejected' && o.reason instanceof StoreUnavailableError),
    ).toBe(true);
    await expect(batcher.submit(99)).rejects.toBeInstanceOf(StoreUnavailableError);
    await batcher.idle();
    expect(store.written).toEqual([]);
  });

  it('once stopping, writes what is pending without waiting for company', async () => {
    const store = new MemoryStore();
    const batcher = new MicroBatcher(store, { ...options, maxWaitMs: 60_000 });
    const pending = batcher.submit(3);
    batcher.stop();
    await expect(pending).resolves.toBe('ok:3');
  });
});
