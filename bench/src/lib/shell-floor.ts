import { randomUUID } from 'node:crypto';
import { EdgeEnv } from '@switchyard/config';
import { SqlDatabaseModule, SqlReadiness } from '@switchyard/db/sql';
import {
  MessagingModule,
  QueueConnection,
  RedisReadiness,
  UsageQueue,
  busConnectionOf,
} from '@switchyard/messaging';
import { HealthModule, MetricsModule } from '@switchyard/observability';
import { startTracing } from '@switchyard/observability/tracing';
import { startService, type FrontDoor, type ServiceDefinition } from '@switchyard/service';
import { passThroughByUndici } from './pass-through.js';

// The floor with the suite's service shell around it: what any edge built on this stack
// carries before its first feature (docs/performance.md, "The service shell's own cost").
// It starts as the edge starts, with the edge's environment, ports and V8 flags: tracing
// (off without an endpoint), the validated environment, NestJS on Fastify, the Postgres
// pool, the Redis bus with its subscriber, BullMQ's usage queue opened as a producer,
// metrics, health and the operations port. Its front door passes every /v1 request through
// to UPSTREAM_URL as the undici floor does, and records it as the edge's front door does
// (the HTTP metrics); no auth, routing, limits, holds, usage or outcome.
//
//   UPSTREAM_URL=… EDGE_PORT=… EDGE_OPS_PORT=… DATABASE_URL=… REDIS_URL=… node bench/dist/lib/shell-floor.js
//   (the gateway benchmark starts it, as its `shell` target)

class ShellFloorModule {}

const upstreamUrl = new URL(process.env.UPSTREAM_URL ?? '');

const shellFloor: ServiceDefinition<EdgeEnv> = {
  name: 'edge',
  environment: EdgeEnv,
  module: (env) => ({
    module: ShellFloorModule,
    imports: [
      SqlDatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE }),
      MessagingModule.forRoot(busConnectionOf(env)),
      MetricsModule.forService('edge'),
      HealthModule.register([SqlReadiness, RedisReadiness]),
    ],
  }),
  port: (env) => env.EDGE_PORT,
  opsPort: (env) => env.EDGE_OPS_PORT,
  bodyLimit: (env) => env.MAX_BODY_BYTES,
  trustProxy: (env) => env.TRUSTED_PROXIES,
  acceptRequestIds: false,
  requestContext: false,
  logSuccessfulRequests: false,
  bodyParser: false,
  frontDoor: (app, hooks): FrontDoor => {
    // Held open for the process's life, as the edge's usage publisher holds its queue.
    const usage = UsageQueue.open(app.get(QueueConnection, { strict: false }));
    usage.on('error', () => undefined);
    const passThrough = passThroughByUndici(upstreamUrl);
    return (request, response) => {
      if (!request.url?.startsWith('/v1/')) return false;
      const id = randomUUID();
      const started = performance.now();
      response.once('finish', () =>
        hooks.finished({
          id,
          method: request.method ?? 'POST',
          route: '/v1/chat/completions',
          status: response.statusCode,
          elapsedMs: performance.now() - started,
          raw: request,
        }),
      );
      passThrough(request, response);
      return true;
    };
  },
  bus: { connection: busConnectionOf, requiredHandlers: [] },
};

await startTracing('edge');
await startService(shellFloor);
