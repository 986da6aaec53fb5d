import {
  currentTraceId,
  currentTraceparent,
  inLinkedSpan,
  injectTraceContext,
  linkTo,
  recordFinishedSpan,
  startConsumerSpan,
  tracingActive,
  type TraceCarrier,
} from './trace-context.js';
import { startTracing, tracingRequested } from './tracing.js';

// Tracing is off and free unless an OTLP endpoint is set (docs/operations.md, "Traces").

describe('tracingRequested', () => {
  it('asks for traces only with an OTLP endpoint, and not when the SDK is disabled', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(
      tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }),
    ).toBe(true);
    expect(
      tracingRequested({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_SDK_DISABLED: 'true',
      }),
    ).toBe(false);
  });
});

describe('with tracing off', () => {
  it('starts nothing without an endpoint', async () => {
    await expect(startTracing('spec', {})).resolves.toBe(false);
    expect(tracingActive()).toBe(false);
  });

  it('carries no context and makes no span', async () => {
    const carrier: TraceCarrier = {};
    injectTraceContext(carrier);
    expect(carrier).toEqual({});
    expect(currentTraceparent()).toBeUndefined();
    expect(currentTraceId()).toBeUndefined();
    expect(
      startConsumerSpan('bus x', { traceparent: `00-${'1'.repeat(32)}-${'2'.repeat(16)}-01` }, {}),
    ).toBeUndefined();
    expect(linkTo(`00-${'1'.repeat(32)}-${'2'.repeat(16)}-01`)).toBeUndefined();
    expect(recordFinishedSpan('gateway chat.completions', Date.now(), {})).toBeUndefined();
    await expect(inLinkedSpan('usage settle', [], {}, () => Promise.resolve(7))).resolves.toBe(7);
  });
});
