import { startTracing } from '@switchyard/observability/tracing';

// Tracing starts before the app is imported: its instrumentations patch http, ioredis and
// pg as they load (docs/operations.md, "Traces"). Without an OTLP endpoint it does nothing.
await startTracing('mock-upstream');
const { startService } = await import('@switchyard/service');
const { mockUpstreamDefinition } = await import('./mock-upstream.definition.js');

await startService(mockUpstreamDefinition);
