import { type UsageRecord } from '@switchyard/contracts';
import {
  Registry,
  TalliedCounter,
  TalliedHistogram,
  type CounterTally,
  type HistogramTally,
} from '@switchyard/observability';

// Per model and channel figures of finished requests, for the gateway dashboard and its
// alerts (docs/operations.md). Only a model some channel served gets its own label: a
// client's made-up model names would otherwise grow the label set without bound.

const UNROUTED = '(unrouted)';
const NO_CHANNEL = 'none';

const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const FIRST_BYTE_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

type StatusClass = '2xx' | '4xx' | '5xx' | 'other';

function statusClass(status: number): StatusClass {
  if (status >= 200 && status < 300) return '2xx';
  if (status >= 400 && status < 500) return '4xx';
  if (status >= 500) return '5xx';
  return 'other';
}

interface Series {
  latency: HistogramTally;
  firstByte: HistogramTally;
  prompt: CounterTally;
  completion: CounterTally;
  failovers: CounterTally;
  requests: Map<StatusClass, CounterTally>;
}

export class RequestMetrics {
  private readonly requests: TalliedCounter<'model' | 'channel' | 'status_class'>;
  private readonly latency: TalliedHistogram<'model' | 'channel'>;
  private readonly firstByte: TalliedHistogram<'model' | 'channel'>;
  private readonly tokens: TalliedCounter<'model' | 'kind'>;
  private readonly failovers: TalliedCounter<'model'>;
  /** Tallies bound once per (model, channel): a request's figures are a few additions. */
  private readonly series = new Map<string, Series>();

  constructor(registry: Registry) {
    this.requests = new TalliedCounter({
      name: 'gateway_requests_total',
      help: 'Finished gateway requests by model, channel (id) and the status class the client got.',
      labelNames: ['model', 'channel', 'status_class'],
      registers: [registry],
    });
    this.latency = new TalliedHistogram({
      name: 'gateway_request_duration_seconds',
      help: 'Time from a request to the end of its answer, by model and channel (id).',
      labelNames: ['model', 'channel'],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    this.firstByte = new TalliedHistogram({
      name: 'gateway_time_to_first_byte_seconds',
      help: "Time from a request to the upstream's first byte, by model and channel (id).",
      labelNames: ['model', 'channel'],
      buckets: FIRST_BYTE_BUCKETS,
      registers: [registry],
    });
    this.tokens = new TalliedCounter({
      name: 'gateway_tokens_total',
      help: 'Tokens the upstreams reported, by model and kind (prompt, completion).',
      labelNames: ['model', 'kind'],
      registers: [registry],
    });
    this.failovers = new TalliedCounter({
      name: 'gateway_failovers_total',
      help: 'Upstream attempts after the first, by model: each is a failover to another channel or key.',
      labelNames: ['model'],
      registers: [registry],
    });
  }

  observe(usage: UsageRecord): void {
    const status = statusClass(usage.status);
    if (usage.channelId === null) {
      this.requests.tally({ model: UNROUTED, channel: NO_CHANNEL, status_class: status }).inc();
      return;
    }
    const model = usage.model;
    const channel = String(usage.channelId);
    const series = this.seriesOf(model, channel);
    let requests = series.requests.get(status);
    if (!requests) {
      requests = this.requests.tally({ model, channel, status_class: status });
      series.requests.set(status, requests);
    }
    requests.inc();
    series.latency.observe(usage.latencyMs / 1000);
    if (usage.firstByteMs !== null) series.firstByte.observe(usage.firstByteMs / 1000);
    if (usage.usage) {
      series.prompt.inc(usage.usage.promptTokens);
      series.completion.inc(usage.usage.completionTokens);
    }
    if (usage.attempts > 1) series.failovers.inc(usage.attempts - 1);
  }

  private seriesOf(model: string, channel: string): Series {
    const key = `${model}\u0000${channel}`;
    let series = this.series.get(key);
    if (!series) {
      series = {
        latency: this.latency.tally({ model, channel }),
        firstByte: this.firstByte.tally({ model, channel }),
        prompt: this.tokens.tally({ model, kind: 'prompt' }),
        completion: this.tokens.tally({ model, kind: 'completion' }),
        failovers: this.failovers.tally({ model }),
        requests: new Map(),
      };
      this.series.set(key, series);
    }
    return series;
  }
}
