import { Controller, Injectable } from '@nestjs/common';
import { Events } from '@switchyard/contracts';
import { ReloadedCopy } from '@switchyard/gateway-store/prices';
import { OnEvent } from '@switchyard/messaging';
import { type FallbackLists, ModelFallbacksRepository } from './model-fallbacks.repository.js';

// The fallback lists in memory (docs/routing.md, "Fallbacks across models"), read as the
// prices are: at start, on `model-fallback.changed`, and every 5 minutes in case an event
// was missed while Redis was away. Until the first read succeeds no model falls back.

@Injectable()
export class FallbackTable extends ReloadedCopy<Map<string, FallbackLists>> {
  constructor(private readonly repository: ModelFallbacksRepository) {
    super('model fallbacks');
  }

  protected async read(): Promise<Map<string, FallbackLists>> {
    const rows = await this.repository.list();
    return new Map(rows.map(({ model, ...lists }) => [model, lists] as [string, FallbackLists]));
  }

  /** The model's lists; undefined when it has none. */
  listsOf(model: string): FallbackLists | undefined {
    return this.copy?.get(model);
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
