import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type TextMapGetter,
} from '@opentelemetry/api';

// What the rest of the suite uses of tracing: carry a trace context across the bus and the
// usage queue, start the spans those hops need, and add attributes to the request's span.
// Only the OpenTelemetry API is imported here, never the SDK: with tracing off (no OTLP
// endpoint, docs/operations.md "Traces") every function returns at its first line.

let active = false;

/** Set once by `startTracing` when an SDK is registered; never unset. */
export function markTracingActive(): void {
  active = true;
}

/** Whether this process exports traces. */
export function tracingActive(): boolean {
  return active;
}

/** The header a gateway answer carries its trace id in, to quote when asking about it. */
export const TRACE_ID_HEADER = 'x-switchyard-trace-id';

/** The carrier of a trace context in a bus packet or a queued record: W3C trace context. */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

const carrierGetter: TextMapGetter<TraceCarrier> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => (key === 'traceparent' || key === 'tracestate' ? carrier[key] : undefined),
};

/** Writes the active context into `carrier` (nothing when tracing is off or no span is active). */
export function injectTraceContext(carrier: TraceCarrier): void {
  if (!active) return;
  propagation.inject(context.active(), carrier, {
    set: (target, key, value) => {
      if (key === 'traceparent' || key === 'tracestate') target[key] = value;
    },
  });
}

/** The active span's `traceparent`, for a record that leaves the process. */
export function currentTraceparent(): string | undefined {
  if (!active) return undefined;
  const carrier: TraceCarrier = {};
  injectTraceContext(carrier);
  return carrier.traceparent;
}

/** The active span's trace id (32 hex digits), or undefined without tracing. */
export function currentTraceId(): string | undefined {
  if (!active) return undefined;
  const span = trace.getActiveSpan();
  return span && span.isRecording() ? span.spanContext().traceId : undefined;
}

/**
 * A span for work that is over already: from `startedAt` (epoch milliseconds) to now, a
 * child of the active span (which may have ended: an HTTP server span ends with the last
 * byte sent, before a stream's usage is known). Returns its `traceparent`.
 */
export function recordFinishedSpan(
  name: string,
  startedAt: number,
  attributes: Attributes,
): string | undefined {
  if (!active) return undefined;
  const span = tracer().startSpan(
    name,
    { kind: SpanKind.INTERNAL, startTime: startedAt, attributes },
    context.active(),
  );
  span.end();
  // Not sampled: nothing to link to.
  if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return undefined;
  const carrier: TraceCarrier = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier, {
    set: (target, key, value) => {
      if (key === 'traceparent') target.traceparent = value;
    },
  });
  return carrier.traceparent;
}

/** Adds attributes to the active span (the request's, in an HTTP handler). */
export function setActiveSpanAttributes(attributes: Attributes): void {
  if (!active) return;
  const span = trace.getActiveSpan();
  if (span?.isRecording()) span.setAttributes(attributes);
}

const tracer = () => trace.getTracer('switchyard');

/** A started span, and how to run work with it active. */
export interface StartedSpan {
  run<T>(work: () => T): T;
  end(): void;
}

/**
 * Starts the span of a bus message as a child of the context its sender carried.
 * Undefined when tracing is off.
 */
export function startConsumerSpan(
  name: string,
  carrier: TraceCarrier | undefined,
  attributes: Attributes,
): StartedSpan | undefined {
  if (!active) return undefined;
  const parent = carrier ? propagation.extract(ROOT_CONTEXT, carrier, carrierGetter) : ROOT_CONTEXT;
  const span: Span = tracer().startSpan(name, { kind: SpanKind.CONSUMER, attributes }, parent);
  const spanContext: Context = trace.setSpan(parent, span);
  return { run: (work) => context.with(spanContext, work), end: () => span.end() };
}

/** The span context a `traceparent` names, as a link: undefined when it names none. */
export function linkTo(traceparent: string | undefined): Link | undefined {
  if (!active || !traceparent) return undefined;
  const extracted = propagation.extract(ROOT_CONTEXT, { traceparent }, carrierGetter);
  const spanContext = trace.getSpanContext(extracted);
  return spanContext ? { context: spanContext } : undefined;
}

/** The active context, kept to parent or link work done later for it (a batch's). */
export type CapturedTrace = Context;

export function captureTrace(): CapturedTrace | undefined {
  return active ? context.active() : undefined;
}

/** A link to the span of a captured context, when it has one. */
export function linkToCaptured(captured: CapturedTrace | undefined): Link | undefined {
  const spanContext = captured ? trace.getSpanContext(captured) : undefined;
  return spanContext ? { context: spanContext } : undefined;
}

/** Adds an event (something that happened at one moment) to the active span. */
export function addActiveSpanEvent(name: string, attributes: Attributes): void {
  if (!active) return;
  const span = trace.getActiveSpan();
  if (span?.isRecording()) span.addEvent(name, attributes);
}

/**
 * Runs `work` in a new span linked to `links`: the requests one batch serves. Without
 * `parent` the span is a root (a batch has many parents, so it has none and links to each);
 * with one it joins that trace. Without tracing it just runs `work`.
 */
export async function inLinkedSpan<T>(
  name: string,
  links: readonly Link[],
  attributes: Attributes,
  work: () => Promise<T>,
  options: { kind?: 'producer' | 'consumer'; parent?: CapturedTrace } = {},
): Promise<T> {
  if (!active) return work();
  const kind = options.kind === 'producer' ? SpanKind.PRODUCER : SpanKind.CONSUMER;
  return tracer().startActiveSpan(
    name,
    { kind, links: [...links], attributes, root: !options.parent },
    options.parent ?? ROOT_CONTEXT,
    async (span) => {
      try {
        return await work();
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}
