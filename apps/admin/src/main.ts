import { startTracing } from '@switchyard/observability/tracing';

// Tracing starts before the app is imported: its instrumentations patch http, ioredis and
// pg as they load (docs/operations.md, "Traces"). Without an OTLP endpoint it does nothing.
await startTracing('admin');
const { startService } = await import('@switchyard/service');
const { adminDefinition } = await import('./admin.definition.js');

await startService(adminDefinition);
