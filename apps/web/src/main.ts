import { startTracing } from '@switchyard/observability/tracing';

// Tracing starts before the app is imported: its instrumentations patch http, ioredis and
// pg as they load (docs/operations.md, "Traces"). Without an OTLP endpoint it does nothing.
await startTracing('web');
const { startService } = await import('@switchyard/service');
const { webDefinition } = await import('./web.definition.js');

await startService(webDefinition);
