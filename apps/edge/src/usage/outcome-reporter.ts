import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Events, type ChannelOutcome } from '@switchyard/contracts';
import { EventBus } from '@switchyard/messaging';
import { Counter, Registry } from '@switchyard/observability';

// How upstream attempts went, for the router (the one authority on channel health).
// Outcomes are batched every 100 ms; they are signals, so a batch lost while Redis is
// away is dropped rather than kept.

const REPORT_EVERY_MS = 100;

@Injectable()
export class OutcomeReporter implements OnApplicationShutdown {
  private readonly logger = new Logger('OutcomeReporter');
  private readonly edgeId = randomUUID();
  private pending: ChannelOutcome[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly attempts: Counter<'kind'>;

  constructor(
    private readonly bus: EventBus,
    registry: Registry,
  ) {
    this.attempts = new Counter({
      name: 'edge_upstream_attempts_total',
      help: 'Upstream attempts by how they ended.',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.timer = setInterval(() => void this.report(), REPORT_EVERY_MS);
    this.timer.unref();
  }

  add(outcome: ChannelOutcome): void {
    this.attempts.inc({ kind: outcome.kind });
    this.pending.push(outcome);
  }

  private async report(): Promise<void> {
    if (this.pending.length === 0) return;
    const outcomes = this.pending;
    this.pending = [];
    try {
      await this.bus.publish(Events.ChannelOutcomes, { edgeId: this.edgeId, outcomes });
    } catch (error) {
      this.logger.debug(`dropped ${outcomes.length} outcome(s): ${(error as Error).message}`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.report();
  }
}
