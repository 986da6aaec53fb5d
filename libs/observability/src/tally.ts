import {
  Counter,
  Histogram,
  type CounterConfiguration,
  type HistogramConfiguration,
  type LabelValues,
} from 'prom-client';

// Counters and histograms for a request's path. prom-client 15 validates and hashes a
// series' labels at every observation, a bound child's too, and looks the series up by
// that string: on the edge that was 3-4 % of its CPU, a dozen observations a request
// (docs/performance.md, "Metrics by the scrape"). A tally is a series bound once to plain
// numbers; the scrape reads them. The metrics exported are the same, name for name and
// line for line; only the time of the work moves, from each request to each scrape.

export interface CounterTally {
  inc(amount?: number): void;
}

export interface HistogramTally {
  observe(value: number): void;
}

/** The key of a label set: its values in the metric's label order. */
function keyOf<L extends string>(names: readonly L[], labels: LabelValues<L>): string {
  let key = '';
  for (const name of names) key += `${labels[name] ?? ''}\u0000`;
  return key;
}

/** prom-client's constructor resets the metric before a subclass's fields exist. */
function startedTallies<T>(tallies: Map<string, T> | undefined): Iterable<T> {
  return tallies?.values() ?? [];
}

interface CountedSeries<L extends string> extends CounterTally {
  readonly labels: LabelValues<L>;
  pending: number;
  /** Whether prom-client holds the series yet (a bound series is exported from its first scrape, at 0). */
  exported: boolean;
}

/**
 * A counter whose series count in plain numbers, handed to prom-client when the registry
 * is read; a series is exported from the first scrape after it is bound, at 0 if nothing
 * was counted yet. `inc` with labels still works, for paths that are not hot.
 */
export class TalliedCounter<L extends string = string> extends Counter<L> {
  private readonly tallies = new Map<string, CountedSeries<L>>();
  private readonly names: readonly L[];

  constructor(config: CounterConfiguration<L>) {
    const collect = config.collect;
    super({
      ...config,
      collect(this: Counter<L>) {
        (this as TalliedCounter<L>).flush();
        return collect?.call(this);
      },
    });
    this.names = [...(config.labelNames ?? [])];
  }

  /** The series of these labels, bound once: keep it, and count through it. */
  tally(labels: LabelValues<L> = {}): CounterTally {
    const key = keyOf(this.names, labels);
    let series = this.tallies.get(key);
    if (!series) {
      const created: CountedSeries<L> = {
        labels: { ...labels },
        pending: 0,
        exported: false,
        inc(amount = 1) {
          created.pending += amount;
        },
      };
      series = created;
      this.tallies.set(key, series);
    }
    return series;
  }

  override reset(): void {
    for (const series of startedTallies(this.tallies)) {
      series.pending = 0;
      series.exported = false;
    }
    super.reset();
  }

  private flush(): void {
    for (const series of this.tallies.values()) {
      if (series.pending === 0 && series.exported) continue;
      this.inc(series.labels, series.pending);
      series.pending = 0;
      series.exported = true;
    }
  }
}

interface ObservedSeries<L extends string> extends HistogramTally {
  readonly labels: LabelValues<L>;
  /** Observations per bucket, not cumulative; the last is above every bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

/** One exported line of a histogram, in the shape prom-client's registry formats. */
interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels: Record<string, string | number>;
  value: number;
  metricName: string;
  /** prom-client's buckets carry an exemplar slot, null without exemplars. */
  exemplar?: null;
}

/**
 * A histogram whose series are only tallies: each observation adds to its bucket's count
 * and the sum, and the registry reads the buckets as prom-client's own histogram exports
 * them (cumulative, then `+Inf`, `_sum`, `_count`). prom-client reads a histogram through
 * `getForPromString` for the text format and through `get` (which calls it) for JSON, so
 * that one method is what is replaced. Observe only through tallies: what prom-client's own
 * `observe` records is not exported.
 */
export class TalliedHistogram<L extends string = string> extends Histogram<L> {
  private readonly tallies = new Map<string, ObservedSeries<L>>();
  private readonly names: readonly L[];
  private readonly bounds: readonly number[];
  /** prom-client keeps these on the metric but does not type them. */
  private readonly exported: Pick<HistogramConfiguration<L>, 'name' | 'help' | 'aggregator'>;

  constructor(config: HistogramConfiguration<L> & { buckets: number[] }) {
    super(config);
    this.names = [...(config.labelNames ?? [])];
    this.bounds = [...config.buckets].sort((a, b) => a - b);
    this.exported = {
      name: config.name,
      help: config.help,
      aggregator: config.aggregator ?? 'sum',
    };
  }

  /** The series of these labels, bound once: keep it, and observe through it. */
  tally(labels: LabelValues<L> = {}): HistogramTally {
    const key = keyOf(this.names, labels);
    let series = this.tallies.get(key);
    if (!series) {
      const bounds = this.bounds;
      const created: ObservedSeries<L> = {
        labels: { ...labels },
        counts: new Array<number>(bounds.length + 1).fill(0),
        sum: 0,
        count: 0,
        observe(value: number) {
          if (!Number.isFinite(value)) return;
          let bucket = 0;
          while (bucket < bounds.length && value > bounds[bucket]!) bucket += 1;
          created.counts[bucket]! += 1;
          created.sum += value;
          created.count += 1;
        },
      };
      series = created;
      this.tallies.set(key, series);
    }
    return series;
  }

  override reset(): void {
    for (const series of startedTallies(this.tallies)) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }

  /** Read by prom-client's registry (the text format) and by `get` (JSON). */
  getForPromString(): Promise<{
    name: string;
    help: string;
    type: string;
    values: ExportedValue[];
    aggregator: string;
  }> {
    const { name, help, aggregator = 'sum' } = this.exported;
    const values: ExportedValue[] = [];
    const bucketName = `${name}_bucket`;
    for (const series of this.tallies.values()) {
      if (series.count === 0) continue;
      const labels = series.labels as Record<string, string | number>;
      let cumulative = 0;
      this.bounds.forEach((bound, index) => {
        cumulative += series.counts[index]!;
        values.push({
          labels: { le: bound },
          sharedLabels: labels,
          value: cumulative,
          metricName: bucketName,
          exemplar: null,
        });
      });
      values.push(
        {
          labels: { le: '+Inf' },
          sharedLabels: labels,
          value: series.count,
          metricName: bucketName,
          exemplar: null,
        },
        { labels: {}, sharedLabels: labels, value: series.sum, metricName: `${name}_sum` },
        { labels: {}, sharedLabels: labels, value: series.count, metricName: `${name}_count` },
      );
    }
    return Promise.resolve({ name, help, type: 'histogram', values, aggregator });
  }
}
