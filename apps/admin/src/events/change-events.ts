import { Injectable, Logger } from '@nestjs/common';
import {
  Events,
  type ChangeAction,
  type EventName,
  type EventPayload,
} from '@switchyard/contracts';
import { EventBus } from '@switchyard/messaging';

/**
 * Tells the edges and the router what changed, after the change is committed. A failed
 * publish (Redis away) does not undo the change: it is logged, and the subscribers catch
 * up from Postgres when they resynchronise.
 */
@Injectable()
export class ChangeEvents {
  private readonly logger = new Logger('ChangeEvents');

  constructor(private readonly bus: EventBus) {}

  /** `channelId` absent: many channels changed at once. */
  channelChanged(channelId: number | undefined, action: ChangeAction): Promise<void> {
    return this.publish(
      Events.ChannelChanged,
      channelId === undefined ? { action } : { channelId, action },
    );
  }

  tokenChanged(tokenId: number, keyHash: string, action: ChangeAction): Promise<void> {
    return this.publish(Events.TokenChanged, { tokenId, keyHash, action });
  }

  /** `model` absent: several prices changed. */
  priceChanged(model?: string): Promise<void> {
    return this.publish(Events.PriceChanged, model === undefined ? {} : { model });
  }

  /** Edges read the fallback lists again (docs/routing.md, "Fallbacks across models"). */
  modelFallbackChanged(model: string, action: ChangeAction): Promise<void> {
    return this.publish(Events.ModelFallbackChanged, { model, action });
  }

  /** Edges read again the budgets of the tokens it covers (`Budget.subject`). */
  budgetChanged(subject: string, action: ChangeAction): Promise<void> {
    return this.publish(Events.BudgetChanged, { subject, action });
  }

  /**
   * A team's policy, members, billing, price group or balance changed: edges read its
   * tokens again (budgets of members who left with them).
   */
  teamChanged(teamId: number, action: ChangeAction = 'updated'): Promise<void> {
    return this.publish(Events.TeamChanged, { teamId, action });
  }

  priceGroupChanged(name: string): Promise<void> {
    return this.publish(Events.PriceGroupChanged, { name });
  }

  private async publish<E extends EventName>(event: E, payload: EventPayload<E>): Promise<void> {
    try {
      await this.bus.publish(event, payload);
    } catch (error) {
      this.logger.error({
        message: 'change committed but its event could not be published',
        event,
        reason: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
