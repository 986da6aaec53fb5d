import { markTracingActive } from './trace-context.js';
import { redactSecrets } from './redaction.js';

// OpenTelemetry for every app (docs/operations.md, "Traces"). Each main.ts awaits
// `startTracing(name)` first and imports the app only afterwards: the instrumentations
// patch `http`, `ioredis` and `pg` as they load, so the SDK and its module hooks must be in
// place before any of them is imported. Without an OTLP endpoint nothing below the first
// lines runs: no SDK, no module hooks, no instrumentation is even loaded (docs/performance.md,
// "Tracing").
//
// This file is the package's `./tracing` entry on purpose: it must load without Nest, pino
// or anything else that could pull `http` in before the hooks exist.

export type TracingEnv = Record<string, string | undefined>;

let shutdown: (() => Promise<void>) | undefined;

/** Whether the environment asks for traces: an OTLP traces endpoint is set and the SDK not disabled. */
export function tracingRequested(env: TracingEnv = process.env): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return Boolean(endpoint) && env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true';
}

/** Probes and scrapes are not traced: they would outnumber every request. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Registers the SDK for `serviceName` when `tracingRequested()`; returns whether it did.
 * The exporter, the sampler (OTEL_TRACES_SAMPLER and its _ARG) and the resource
 * (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME) follow the standard OTEL_* variables.
 */
export async function startTracing(
  serviceName: string,
  env: TracingEnv = process.env,
): Promise<boolean> {
  if (!tracingRequested(env) || shutdown) return Boolean(shutdown);

  // The ESM hook first, told to wrap only the modules an instrumentation asks for.
  const { register } = await import('node:module');
  const { createAddHookMessageChannel } = await import('import-in-the-middle');
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);

  const [api, core, hooks, sdk, resources, semconv, exporter, instrumentation, http, undici] =
    await Promise.all([
      import('@opentelemetry/api'),
      import('@opentelemetry/core'),
      import('@opentelemetry/context-async-hooks'),
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/semantic-conventions'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/instrumentation'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-undici'),
    ]);
  const [ioredis, pg] = await Promise.all([
    import('@opentelemetry/instrumentation-ioredis'),
    import('@opentelemetry/instrumentation-pg'),
  ]);

  api.context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(
    new core.CompositePropagator({
      propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()],
    }),
  );
  const resource = resources
    .resourceFromAttributes({ [semconv.ATTR_SERVICE_NAME]: serviceName })
    .merge(
      resources.detectResources({
        detectors: [resources.envDetector, resources.processDetector, resources.hostDetector],
      }),
    );
  const processor = new sdk.BatchSpanProcessor({
    exporter: new exporter.OTLPTraceExporter(),
    scheduledDelayMillis: positiveNumber(env.OTEL_BSP_SCHEDULE_DELAY) ?? 1_000,
    maxQueueSize: positiveNumber(env.OTEL_BSP_MAX_QUEUE_SIZE) ?? 2_048,
    maxExportBatchSize: positiveNumber(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE) ?? 512,
  });
  const provider = new sdk.TracerProvider({
    resource,
    sampler: samplerOf(sdk, env),
    spanProcessors: [new RedactingSpanProcessor(processor)],
  });
  api.trace.setGlobalTracerProvider(provider);

  instrumentation.registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new http.HttpInstrumentation({
        ignoreIncomingRequestHook: (request) =>
          UNTRACED_PATHS.has((request.url ?? '/').split('?', 1)[0] ?? '/'),
        // Outgoing calls go through undici; node:http clients are only Redis-free
        // libraries' health checks, whose spans would be noise.
        disableOutgoingRequestInstrumentation: true,
      }),
      new undici.UndiciInstrumentation({ requireParentforSpans: true }),
      // The command's name only: arguments are keys and payloads (a queued usage record
      // holds the prompt text metering counts).
      new ioredis.IORedisInstrumentation({
        requireParentSpan: true,
        dbStatementSerializer: (command) => command,
      }),
      // Parameterised SQL without its values (enhancedDatabaseReporting stays off).
      new pg.PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  await waitForAllMessagesAcknowledged();

  markTracingActive();
  shutdown = () => provider.shutdown();
  return true;
}

/** Sends the spans still buffered; every app's exit awaits it. */
export async function stopTracing(): Promise<void> {
  await shutdown?.().catch(() => undefined);
}

type SdkTrace = typeof import('@opentelemetry/sdk-trace');

/** OTEL_TRACES_SAMPLER as the specification names its values; parent-based always-on by default. */
function samplerOf(sdk: SdkTrace, env: TracingEnv): import('@opentelemetry/sdk-trace').Sampler {
  const ratio = Math.min(1, Math.max(0, Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1') || 0));
  switch (env.OTEL_TRACES_SAMPLER?.trim().toLowerCase()) {
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'traceidratio':
      return new sdk.TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(ratio) });
    default:
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() });
  }
}

function positiveNumber(value: string | undefined): number | undefined {
  const number = Number(value);
  return value && Number.isFinite(number) && number > 0 ? number : undefined;
}

type SpanProcessor = import('@opentelemetry/sdk-trace').SpanProcessor;
type ReadableSpan = import('@opentelemetry/sdk-trace').ReadableSpan;
type Attributes = import('@opentelemetry/api').Attributes;

/**
 * Every attribute, event and status text goes through the suite's one redaction before it
 * leaves the process: an upstream URL with Gemini's `?key=`, an error quoting a key. Our
 * own attributes never hold a secret; this is for what instrumentations copy in.
 */
class RedactingSpanProcessor implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}

  onStart(...args: Parameters<SpanProcessor['onStart']>): void {
    this.next.onStart(...args);
  }

  onEnd(span: ReadableSpan): void {
    redactAttributes(span.attributes);
    for (const event of span.events) if (event.attributes) redactAttributes(event.attributes);
    if (span.status.message) {
      (span.status as { message?: string }).message = redactSecrets(span.status.message);
    }
    this.next.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

function redactAttributes(attributes: Attributes): void {
  const writable = attributes as Record<string, unknown>;
  for (const [key, value] of Object.entries(attributes)) {
    if (typeof value === 'string') writable[key] = redactSecrets(value);
  }
}
