import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Events, type ChannelOutcome } from '@switchyard/contracts';
import { EventBus } from '@switchyard/messaging';
import {
  Registry,
  TalliedCounter,
  addActiveSpanEvent,
  captureTrace,
  inLinkedSpan,
  linkToCaptured,
  tracingActive,
  type CapturedTrace,
} from '@switchyard/observability';

// How upstream attempts went, for the router (the one authority on channel health).
// Outcomes are batched every 100 ms; they are signals, so a batch lost while Redis is
// away is dropped rather than kept.

const REPORT_EVERY_MS = 100;

@Injectable()
export class OutcomeReporter implements OnApplicationShutdown {
  private readonly logger = new Logger('OutcomeReporter');
  private readonly edgeId = randomUUID();
  private pending: ChannelOutcome[] = [];
  /** With tracing: the context of each pending outcome's request, in order. */
  private pendingTraces: (CapturedTrace | undefined)[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly attempts: TalliedCounter<'kind'>;

  constructor(
    private readonly bus: EventBus,
    registry: Registry,
  ) {
    this.attempts = new TalliedCounter({
      name: 'edge_upstream_attempts_total',
      help: 'Upstream attempts by how they ended.',
      labelNames: ['kind'],
      registers: [registry],
    });
    this.timer = setInterval(() => void this.report(), REPORT_EVERY_MS);
    this.timer.unref();
  }

  /** Called in the request's context: each attempt's end, and why it failed, is an event of its span. */
  add(outcome: ChannelOutcome): void {
    this.attempts.tally({ kind: outcome.kind }).inc();
    this.pending.push(outcome);
    if (tracingActive()) {
      addActiveSpanEvent('upstream attempt', {
        'switchyard.outcome': outcome.kind,
        'switchyard.channel.id': outcome.channelId,
        'switchyard.key.id': outcome.keyId,
        'switchyard.upstream.latency_ms': outcome.latencyMs,
        ...(outcome.httpStatus !== undefined
          ? { 'http.response.status_code': outcome.httpStatus }
          : {}),
      });
      this.pendingTraces.push(captureTrace());
    }
  }

  private async report(): Promise<void> {
    if (this.pending.length === 0) return;
    const outcomes = this.pending;
    const traces = this.pendingTraces;
    this.pending = [];
    this.pendingTraces = [];
    const publish = () =>
      this.bus.publish(Events.ChannelOutcomes, { edgeId: this.edgeId, outcomes });
    try {
      if (traces.length === 0) await publish();
      // One event reports many requests: its span joins the first one's trace, so the
      // router's handling shows there, and links to every one (docs/operations.md, "Traces").
      else
        await inLinkedSpan(
          'publish channel-outcomes',
          traces.flatMap((captured) => linkToCaptured(captured) ?? []),
          { 'messaging.system': 'redis', 'messaging.batch.message_count': outcomes.length },
          publish,
          { kind: 'producer', parent: traces[0] },
        );
    } catch (error) {
      this.logger.debug(`dropped ${outcomes.length} outcome(s): ${(error as Error).message}`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.report();
  }
}
