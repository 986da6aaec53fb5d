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
// (docs/performance.md, "Metrics by the scrape, and a stream's last write"). A tally is a
// series bound once to plain numbers; the scrape reads them. The metrics exported are the
// same, name for name and line for line; only the time of the work moves, from each
// request to each scrape.

export interface CounterTally {
  inc(amount?: number): void;
}

export interface HistogramTally {
  observe(value: number): void;
}

/**
 * Series by their label values, one Map level a label in the metric's order: finding one
 * builds no key string. A value given as a number and as its string are two entries of one
 * series, which is harmless: both hand their counts to prom-client's one series.
 */
class SeriesIndex<L extends string, S> {
  readonly all: S[] = [];
  private readonly root = new Map<unknown, unknown>();

  constructor(private readonly names: readonly L[]) {}

  find(labels: LabelValues<L>, create: () => S): S {
    let level = this.root;
    const last = this.names.length - 1;
    for (let index = 0; index < last; index += 1) {
      const value = labels[this.names[index]!];
      let next = level.get(value) as Map<unknown, unknown> | undefined;
      if (!next) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const value = last < 0 ? undefined : labels[this.names[last]!];
    let series = level.get(value) as S | undefined;
    if (!series) {
      series = create();
      level.set(value, series);
      this.all.push(series);
    }
    return series;
  }
}

/** prom-client's constructor resets the metric before a subclass's fields exist. */
function startedTallies<T>(index: SeriesIndex<string, T> | undefined): readonly T[] {
  return index?.all ?? [];
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
  private readonly tallies: SeriesIndex<L, CountedSeries<L>>;

  constructor(config: CounterConfiguration<L>) {
    const collect = config.collect;
    super({
      ...config,
      collect(this: Counter<L>) {
        (this as TalliedCounter<L>).flush();
        return collect?.call(this);
      },
    });
    this.tallies = new SeriesIndex([...(config.labelNames ?? [])]);
  }

  /** The series of these labels, bound once: keep it, and count through it. */
  tally(labels: LabelValues<L> = {}): CounterTally {
    return this.tallies.find(labels, () => {
      const series: CountedSeries<L> = {
        labels: { ...labels },
        pending: 0,
        exported: false,
        inc(amount = 1) {
          series.pending += amount;
        },
      };
      return series;
    });
  }

  override reset(): void {
    for (const series of startedTallies(this.tallies)) {
      series.pending = 0;
      series.exported = false;
    }
    super.reset();
  }

  private flush(): void {
    for (const series of this.tallies.all) {
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
  private readonly tallies: SeriesIndex<L, ObservedSeries<L>>;
  private readonly bounds: readonly number[];
  /** prom-client keeps these on the metric but does not type them. */
  private readonly exported: Pick<HistogramConfiguration<L>, 'name' | 'help' | 'aggregator'>;

  constructor(config: HistogramConfiguration<L> & { buckets: number[] }) {
    super(config);
    this.tallies = new SeriesIndex([...(config.labelNames ?? [])]);
    this.bounds = [...config.buckets].sort((a, b) => a - b);
    this.exported = {
      name: config.name,
      help: config.help,
      aggregator: config.aggregator ?? 'sum',
    };
  }

  /** The series of these labels, bound once: keep it, and observe through it. */
  tally(labels: LabelValues<L> = {}): HistogramTally {
    const bounds = this.bounds;
    return this.tallies.find(labels, () => {
      const series: ObservedSeries<L> = {
        labels: { ...labels },
        counts: new Array<number>(bounds.length + 1).fill(0),
        sum: 0,
        count: 0,
        observe(value: number) {
          if (!Number.isFinite(value)) return;
          let bucket = 0;
          while (bucket < bounds.length && value > bounds[bucket]!) bucket += 1;
          series.counts[bucket]! += 1;
          series.sum += value;
          series.count += 1;
        },
      };
      return series;
    });
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
    for (const series of this.tallies.all) {
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
