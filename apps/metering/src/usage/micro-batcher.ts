/** Where a batch goes: one transaction per call. */
export interface BatchWriter<I, R> {
  /** Writes every item at once; the results are in the items' order. */
  write(items: I[]): Promise<R[]>;
  /** False while the store cannot be reached at all: then batches wait instead of failing. */
  isReachable(): Promise<boolean>;
  /** A failure that running the same batch again may cure (a deadlock). */
  isTransient(error: unknown): boolean;
}

export interface MicroBatcherOptions {
  /** Most items in one batch. */
  maxSize: number;
  /** How long the first item waits for company before its batch is written. */
  maxWaitMs: number;
  /**
   * How many submitters (`submitAll` calls: a job's records each) can be waiting at once.
   * Once that many wait, no other item can join before one of them is answered, so the
   * batch goes without waiting out `maxWaitMs`. Unset: no such bound.
   */
  maxSubmitters?: number;
  /** Batches written at the same time. */
  maxInFlight: number;
  /** Back-off between attempts while the store is unreachable. */
  outageRetryMs: { min: number; max: number };
  /** Immediate re-runs of a batch after a transient failure. */
  transientRetries: number;
  onBatch?: (size: number, seconds: number) => void;
  onOutage?: (unreachable: boolean) => void;
}

/** The store was unreachable and the batcher is stopping: the item was not written. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

interface Waiting<I, R> {
  item: I;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Collects items into batches: a batch is written when it is full, or `maxWaitMs` after
 * its first item arrived, and each item's promise settles when its batch is written.
 *
 * Failures are told apart by asking the store whether it can be reached:
 * - unreachable: the batch is held and tried again with back-off, without failing any
 *   item, and no other batch starts until the store answers again;
 * - reachable and transient (a deadlock): the batch runs again at once;
 * - reachable otherwise: the batch is split in halves until the items that fail are
 *   alone, so one bad item never fails the others.
 */
export class MicroBatcher<I, R> {
  private pending: Waiting<I, R>[] = [];
  /** Submitters with items still pending (counted down only once none is). */
  private submitters = 0;
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;
  private unreachable = false;
  private stopping = false;
  private readonly sleepers = new Set<() => void>();
  private readonly idleWaiters = new Set<() => void>();

  constructor(
    private readonly writer: BatchWriter<I, R>,
    private readonly options: MicroBatcherOptions,
  ) {}

  /** Items waiting for a batch or in one being written. */
  get size(): number {
    return this.pending.length + this.inFlight;
  }

  get storeUnreachable(): boolean {
    return this.unreachable;
  }

  submit(item: I): Promise<R> {
    return this.submitAll([item])[0]!;
  }

  /** Items of one submitter: each promise settles when its item's batch is written. */
  submitAll(items: I[]): Promise<R>[] {
    if (this.stopping && this.unreachable) {
      return items.map(() => Promise.reject(new StoreUnavailableError('the store is unreachable')));
    }
    const promises = items.map(
      (item) => new Promise<R>((resolve, reject) => this.pending.push({ item, resolve, reject })),
    );
    if (items.length === 0) return promises;
    this.submitters += 1;
    if (
      this.pending.length >= this.options.maxSize ||
      this.stopping ||
      this.submitters >= (this.options.maxSubmitters ?? Infinity)
    ) {
      this.pump();
    } else {
      this.timer ??= setTimeout(() => this.pump(), this.options.maxWaitMs);
    }
    return promises;
  }

  /**
   * From now on nothing is held: what is pending is written at once, and while the store
   * is unreachable every waiting item fails with StoreUnavailableError.
   */
  stop(): void {
    this.stopping = true;
    for (const wake of this.sleepers) wake();
    if (this.unreachable) {
      for (const waiting of this.pending.splice(0)) {
        waiting.reject(new StoreUnavailableError('the store is unreachable'));
      }
    }
    this.pump();
  }

  /** Resolves when nothing is pending or being written. */
  async idle(): Promise<void> {
    while (this.size > 0) {
      await new Promise<void>((resolve) => this.idleWaiters.add(resolve));
    }
  }

  private pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (
      !this.unreachable &&
      this.inFlight < this.options.maxInFlight &&
      this.pending.length > 0
    ) {
      const batch = this.pending.splice(0, this.options.maxSize);
      if (this.pending.length === 0) this.submitters = 0;
      this.inFlight += batch.length;
      void this.run(batch).finally(() => {
        this.inFlight -= batch.length;
        this.afterBatch();
      });
    }
  }

  private afterBatch(): void {
    if (this.pending.length > 0) this.pump();
    if (this.size === 0) {
      for (const resolve of this.idleWaiters) resolve();
      this.idleWaiters.clear();
    }
  }

  private async run(batch: Waiting<I, R>[]): Promise<void> {
    let transientLeft = this.options.transientRetries;
    let backoff = this.options.outageRetryMs.min;
    for (;;) {
      const started = performance.now();
      try {
        const results = await this.writer.write(batch.map((waiting) => waiting.item));
        this.options.onBatch?.(batch.length, (performance.now() - started) / 1000);
        this.setUnreachable(false);
        batch.forEach((waiting, index) => waiting.resolve(results[index] as R));
        return;
      } catch (error) {
        if (await this.reachable()) {
          this.setUnreachable(false);
          if (this.writer.isTransient(error) && transientLeft > 0) {
            transientLeft -= 1;
            continue;
          }
          if (batch.length > 1) {
            const half = Math.ceil(batch.length / 2);
            await this.run(batch.slice(0, half));
            await this.run(batch.slice(half));
          } else {
            batch[0]?.reject(error);
          }
          return;
        }
        if (this.stopping) {
          const unavailable = new StoreUnavailableError('the store is unreachable');
          for (const waiting of batch) waiting.reject(unavailable);
          this.setUnreachable(true);
          return;
        }
        this.setUnreachable(true);
        await this.sleep(backoff);
        backoff = Math.min(backoff * 2, this.options.outageRetryMs.max);
      }
    }
  }

  private async reachable(): Promise<boolean> {
    try {
      return await this.writer.isReachable();
    } catch {
      return false;
    }
  }

  private setUnreachable(unreachable: boolean): void {
    if (this.unreachable === unreachable) return;
    this.unreachable = unreachable;
    this.options.onOutage?.(unreachable);
    if (!unreachable) {
      // Every held batch tries again now, and batches that waited behind them start.
      for (const wake of this.sleepers) wake();
      queueMicrotask(() => this.pump());
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.sleepers.add(wake);
    });
  }
}
