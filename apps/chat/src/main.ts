import { startTracing } from '@switchyard/observability/tracing';

// Tracing starts before the app is imported: its instrumentations patch http, ioredis and
// pg as they load (docs/operations.md, "Traces"). Without an OTLP endpoint it does nothing.
await startTracing('chat');
const { startService } = await import('@switchyard/service');
const { chatDefinition } = await import('./chat.definition.js');

await startService(chatDefinition);
