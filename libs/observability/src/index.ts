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
  MetricsModule,
  Registry,
  serviceRegistry,
} from './metrics.js';
export { maskCredentials } from './redaction.js';
export {
  REQUEST_ID_HEADER,
  acceptRequestId,
  currentRequestId,
  runWithRequestId,
} from './request-context.js';
