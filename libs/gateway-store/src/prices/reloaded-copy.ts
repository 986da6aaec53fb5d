import {
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';

/** A safety net for a change event missed while Redis was away. */
const PERIODIC_RELOAD_MS = 5 * 60_000;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 30_000;

/**
 * A table read whole from the database and kept in memory: read at start, again whenever
 * the subclass's event handler calls `refresh` and every 5 minutes. A read that fails keeps
 * the last copy and is retried with back-off until it succeeds or a newer refresh takes
 * over, so a reload is never half-applied and never rejects. The price table and the model
 * fallbacks are kept this way (docs/architecture.md, "Prices").
 */
export abstract class ReloadedCopy<T> implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger: Logger;
  private current: T | null = null;
  private generation = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private markLoaded!: () => void;
  /** Resolves once the table has been read from the database. */
  readonly loaded: Promise<void> = new Promise((resolve) => (this.markLoaded = resolve));

  /** `what` names the table in the log ("model prices"). */
  protected constructor(private readonly what: string) {
    this.logger = new Logger(new.target.name);
  }

  /** Reads the whole table. */
  protected abstract read(): Promise<T>;

  onApplicationBootstrap(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), PERIODIC_RELOAD_MS).unref();
  }

  beforeApplicationShutdown(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** The copy last read; null until the first read succeeds. A reload replaces it whole. */
  protected get copy(): T | null {
    return this.current;
  }

  /** Reads the table again (see the class). Never rejects. */
  async refresh(): Promise<void> {
    const generation = ++this.generation;
    let delay = RETRY_MIN_MS;
    while (!this.stopped && generation === this.generation) {
      try {
        const copy = await this.read();
        if (generation !== this.generation) return;
        this.current = copy;
        this.markLoaded();
        this.logger.debug({ message: `${this.what} loaded` });
        return;
      } catch (error) {
        this.logger.warn({
          message: `could not read the ${this.what}; retrying`,
          reason: error instanceof Error ? error.message.trim().split('\n').at(-1) : String(error),
          retryInMs: delay,
        });
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
    }
  }
}
