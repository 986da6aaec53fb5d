import {
  Controller,
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Events } from '@switchyard/contracts';
import { OnEvent } from '@switchyard/messaging';
import { type FallbackLists, ModelFallbacksRepository } from './model-fallbacks.repository.js';

// The fallback lists in memory (docs/routing.md, "Fallbacks across models"), read as the
// prices are: at start, on `model-fallback.changed`, and every 5 minutes in case an event
// was missed while Redis was away. Until the first read succeeds no model falls back.

const PERIODIC_RELOAD_MS = 5 * 60_000;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 30_000;

@Injectable()
export class FallbackTable implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('FallbackTable');
  private current = new Map<string, FallbackLists>();
  private generation = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly repository: ModelFallbacksRepository) {}

  onApplicationBootstrap(): void {
    void this.refresh();
    this.timer = setInterval(() => void this.refresh(), PERIODIC_RELOAD_MS).unref();
  }

  beforeApplicationShutdown(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** The model's lists; undefined when it has none. */
  listsOf(model: string): FallbackLists | undefined {
    return this.current.get(model);
  }

  /** Reads the lists again, retrying with back-off; a newer refresh takes over. Never rejects. */
  async refresh(): Promise<void> {
    const generation = ++this.generation;
    let delay = RETRY_MIN_MS;
    while (!this.stopped && generation === this.generation) {
      try {
        const rows = await this.repository.list();
        if (generation !== this.generation) return;
        this.current = new Map(
          rows.map(({ model, ...lists }) => [model, lists] as [string, FallbackLists]),
        );
        return;
      } catch (error) {
        this.logger.warn({
          message: 'could not read the model fallbacks; retrying',
          reason: error instanceof Error ? error.message.trim().split('\n').at(-1) : String(error),
          retryInMs: delay,
        });
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
    }
  }
}

@Controller()
export class FallbackEventsController {
  constructor(private readonly table: FallbackTable) {}

  /** Any change reloads every list: they are few, and a reload is never half-applied. */
  @OnEvent(Events.ModelFallbackChanged)
  changed(): Promise<void> {
    return this.table.refresh();
  }
}
