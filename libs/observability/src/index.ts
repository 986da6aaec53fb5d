export {
  HealthModule,
  HealthService,
  type ReadinessCheck,
  type ReadinessReport,
} from './health.js';
export { createLogger, NestLoggerBridge, type Logger, type LoggerOptions } from './logger.js';
export {
  Counter,
  EventLoopBusy,
  Gauge,
  Histogram,
  HttpMetrics,
  METRICS_CONTENT_TYPE,
  MetricsModule,
  Registry,
  readWithin,
  serviceRegistry,
} from './metrics.js';
export {
  TalliedCounter,
  TalliedHistogram,
  type CounterTally,
  type HistogramTally,
} from './tally.js';
export {
  REDACTED,
  maskCredentials,
  redactAndCut,
  redactSecrets,
  removeSecrets,
  registerSecret,
} from './redaction.js';
export {
  REQUEST_ID_HEADER,
  acceptRequestId,
  currentRequestId,
  runWithRequestId,
} from './request-context.js';
export {
  TRACE_ID_HEADER,
  addActiveSpanEvent,
  captureTrace,
  currentTraceId,
  currentTraceparent,
  inLinkedSpan,
  injectTraceContext,
  linkTo,
  linkToCaptured,
  recordFinishedSpan,
  setActiveSpanAttributes,
  startConsumerSpan,
  tracingActive,
  type CapturedTrace,
  type StartedSpan,
  type TraceCarrier,
} from './trace-context.js';
