import { FaultPlan } from './fault-plan.js';

describe('FaultPlan', () => {
  const none = { latencyMs: 0, chunkDelayMs: 0, errorRate: 0 };

  it('reads per-request faults from x-mock-* headers', () => {
    const plan = new FaultPlan(none);
    expect(
      plan.resolve('k', {
        'x-mock-status': '503',
        'x-mock-hang': '1',
        'x-mock-latency-ms': '20',
        'x-mock-disconnect-after': '2',
        'x-mock-omit-usage': '1',
        'x-mock-reply': 'hi',
        'x-mock-resolved-model': 'gpt-4o-2024-08-06',
      }),
    ).toEqual({
      status: 503,
      hang: true,
      latencyMs: 20,
      disconnectAfterChunks: 2,
      omitUsage: true,
      reply: 'hi',
      resolvedModel: 'gpt-4o-2024-08-06',
    });
  });

  it('applies a scripted fault to the given number of requests for its key only', () => {
    const plan = new FaultPlan(none);
    plan.script('sk-a', { status: 500 }, 2);
    expect(plan.resolve('sk-b', {})).toEqual({});
    expect(plan.resolve('sk-a', {}).status).toBe(500);
    expect(plan.resolve('sk-a', {}).status).toBe(500);
    expect(plan.resolve('sk-a', {})).toEqual({});
  });

  it('lets headers override the script and the script override the defaults', () => {
    const plan = new FaultPlan({ latencyMs: 100, chunkDelayMs: 0, errorRate: 0 });
    plan.script('*', { latencyMs: 5 });
    expect(plan.resolve('sk-a', {}).latencyMs).toBe(5);
    expect(plan.resolve('sk-a', { 'x-mock-latency-ms': '7' }).latencyMs).toBe(7);
    plan.clear();
    expect(plan.resolve('sk-a', {}).latencyMs).toBe(100);
  });

  it('fails the configured share of requests', () => {
    const plan = new FaultPlan({ latencyMs: 0, chunkDelayMs: 0, errorRate: 30 });
    expect(plan.resolve('sk-a', {}, () => 0.29).status).toBe(500);
    expect(plan.resolve('sk-a', {}, () => 0.3).status).toBeUndefined();
  });
});
