import { Counter, Histogram, Registry } from 'prom-client';
import { TalliedCounter, TalliedHistogram } from './tally.js';

// A tallied metric must export exactly what prom-client's own would for the same
// observations: dashboards and alerts read these lines, and a prom-client upgrade that
// changed how a histogram is read would show here first.

const BUCKETS = [0.01, 0.1, 1, 10];
const OBSERVED: [string, string, number][] = [
  ['gpt-4o', '1', 0.004],
  ['gpt-4o', '1', 0.01],
  ['gpt-4o', '1', 0.5],
  ['gpt-4o', '2', 3],
  ['gpt-4o', '2', 42],
  ['o3', '1', 0.2],
];

function registries(): { plain: Registry; tallied: Registry } {
  const plain = new Registry();
  const tallied = new Registry();
  for (const registry of [plain, tallied]) registry.setDefaultLabels({ service: 'test' });
  return { plain, tallied };
}

describe('tallied metrics', () => {
  it("export a counter's series as prom-client's counter does", async () => {
    const { plain, tallied } = registries();
    const config = { name: 'requests_total', help: 'Requests.', labelNames: ['model', 'channel'] };
    const reference = new Counter({ ...config, registers: [plain] });
    const counter = new TalliedCounter({ ...config, registers: [tallied] });
    for (const [model, channel, value] of OBSERVED) {
      reference.inc({ model, channel }, Math.round(value * 10));
      counter.tally({ model, channel }).inc(Math.round(value * 10));
    }
    reference.inc({ model: 'o3', channel: '9' });
    counter.tally({ model: 'o3', channel: '9' }).inc();
    expect(await tallied.metrics()).toBe(await plain.metrics());
    // Counted since the last scrape too (a counter never goes back), and a label given as
    // a number is the same series as its string.
    reference.inc({ model: 'o3', channel: '9' }, 2);
    counter.tally({ model: 'o3', channel: 9 }).inc(2);
    expect(await tallied.metrics()).toBe(await plain.metrics());
    expect(await tallied.metrics()).toContain(
      'requests_total{model="o3",channel="9",service="test"} 3',
    );
  });

  it("export a histogram's series as prom-client's histogram does, in text and JSON", async () => {
    const { plain, tallied } = registries();
    const config = {
      name: 'duration_seconds',
      help: 'Durations.',
      labelNames: ['model', 'channel'],
      buckets: BUCKETS,
    };
    const reference = new Histogram({ ...config, registers: [plain] });
    const histogram = new TalliedHistogram({ ...config, registers: [tallied] });
    for (const [model, channel, value] of OBSERVED) {
      reference.observe({ model, channel }, value);
      histogram.tally({ model, channel }).observe(value);
    }
    expect(await tallied.metrics()).toBe(await plain.metrics());
    expect(await tallied.getMetricsAsJSON()).toEqual(await plain.getMetricsAsJSON());
    expect(await tallied.metrics()).toContain(
      'duration_seconds_bucket{le="1",service="test",model="gpt-4o",channel="1"} 3',
    );
  });

  it('start again from nothing when the registry is reset', async () => {
    const registry = new Registry();
    const histogram = new TalliedHistogram({
      name: 'reset_seconds',
      help: 'Reset.',
      buckets: BUCKETS,
      registers: [registry],
    });
    const counter = new TalliedCounter({
      name: 'reset_total',
      help: 'Reset.',
      registers: [registry],
    });
    histogram.tally().observe(0.5);
    counter.tally().inc(4);
    registry.resetMetrics();
    histogram.tally().observe(5);
    expect(await registry.metrics()).toContain('reset_seconds_count 1');
    expect(await registry.metrics()).toContain('reset_seconds_sum 5');
    expect(await registry.metrics()).toContain('reset_total 0');
  });
});
