import { type UsageRecord } from '@switchyard/contracts';
import { Registry } from '@switchyard/observability';
import { RequestMetrics } from './request-metrics.js';

function finished(overrides: Partial<UsageRecord>): UsageRecord {
  return {
    requestId: 'r',
    tokenId: 1,
    channelId: 7,
    keyId: 3,
    endpoint: 'chat.completions',
    model: 'gpt-4o',
    upstreamModel: 'gpt-4o',
    stream: false,
    status: 200,
    errorCode: null,
    usage: { promptTokens: 12, completionTokens: 5 },
    latencyMs: 300,
    firstByteMs: 120,
    attempts: 1,
    clientIp: null,
    requestedAt: 0,
    ...overrides,
  };
}

async function values(registry: Registry, name: string) {
  return (await registry.getSingleMetric(name)!.get()).values;
}

describe('RequestMetrics', () => {
  it('counts requests, tokens, latency and failovers per model and channel', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry);
    metrics.observe(finished({}));
    metrics.observe(finished({ status: 502, usage: null, attempts: 3, firstByteMs: null }));
    metrics.observe(finished({ channelId: 8 }));

    expect(await values(registry, 'gateway_requests_total')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          labels: { model: 'gpt-4o', channel: '7', status_class: '2xx' },
          value: 1,
        }),
        expect.objectContaining({
          labels: { model: 'gpt-4o', channel: '7', status_class: '5xx' },
          value: 1,
        }),
        expect.objectContaining({
          labels: { model: 'gpt-4o', channel: '8', status_class: '2xx' },
          value: 1,
        }),
      ]),
    );
    expect(await values(registry, 'gateway_tokens_total')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ labels: { model: 'gpt-4o', kind: 'prompt' }, value: 24 }),
        expect.objectContaining({ labels: { model: 'gpt-4o', kind: 'completion' }, value: 10 }),
      ]),
    );
    expect(await values(registry, 'gateway_failovers_total')).toEqual([
      expect.objectContaining({ labels: { model: 'gpt-4o' }, value: 2 }),
    ]);
    const firstByteCounts = (await values(registry, 'gateway_time_to_first_byte_seconds')).filter(
      (v) =>
        (v as { metricName?: string }).metricName === 'gateway_time_to_first_byte_seconds_count',
    );
    expect(firstByteCounts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ labels: { model: 'gpt-4o', channel: '7' }, value: 1 }),
      ]),
    );
  });

  it('keeps the model names of unrouted requests out of the labels', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry);
    for (const model of ['made-up-1', 'made-up-2', 'made-up-3'])
      metrics.observe(finished({ model, channelId: null, keyId: null, status: 404 }));
    expect(await values(registry, 'gateway_requests_total')).toEqual([
      expect.objectContaining({
        labels: { model: '(unrouted)', channel: 'none', status_class: '4xx' },
        value: 3,
      }),
    ]);
    expect(await values(registry, 'gateway_tokens_total')).toEqual([]);
  });
});
