import { EventLoopBusy, serviceRegistry } from './metrics.js';

// Every service's /metrics comes from this registry (MetricsModule.forService), so what it
// exports every service exports: the event loop's delay, and how long it was kept busy.

function metric(text: string, name: string): number | undefined {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([\\d.e+-]+)$`, 'm').exec(text);
  return match ? Number(match[1]) : undefined;
}

describe('a service registry', () => {
  it("exports the event loop's delay, measured since the last scrape", async () => {
    const registry = serviceRegistry('test');
    const text = await registry.metrics();
    for (const name of [
      'nodejs_eventloop_lag_max_seconds',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_eventloop_lag_seconds',
    ])
      expect([name, metric(text, name)]).toEqual([name, expect.any(Number)]);
    expect(text).toContain('service="test"');
  });

  it('exports the longest the event loop was kept busy, in CPU time', async () => {
    const registry = serviceRegistry('test');
    const busy = new EventLoopBusy(registry);
    try {
      await registry.metrics();
      // Holds the loop for 60 ms of CPU time, as a stall would (wall time on a busy machine
      // would be less work).
      const start = process.threadCpuUsage();
      const spent = (): number => {
        const used = process.threadCpuUsage(start);
        return (used.user + used.system) / 1e3;
      };
      while (spent() < 60);
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(metric(await registry.metrics(), 'eventloop_busy_max_seconds')).toBeGreaterThan(0.05);
      // Read again: the scrape started a new span, with no stall in it.
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(metric(await registry.metrics(), 'eventloop_busy_max_seconds')).toBeLessThan(0.05);
    } finally {
      busy.onModuleDestroy();
    }
  });
});
