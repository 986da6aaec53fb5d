import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type DynamicModule, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  ConfigurationError,
  loadEnvironment,
  type AppName,
  type BaseEnv,
} from '@switchyard/config';
import { type EventName, type MessageName } from '@switchyard/contracts';
import { NamespacedRedisServer, inNamespace, type BusConnection } from '@switchyard/messaging';
import {
  HealthService,
  HttpMetrics,
  METRICS_CONTENT_TYPE,
  NestLoggerBridge,
  REQUEST_ID_HEADER,
  Registry,
  TRACE_ID_HEADER,
  acceptRequestId,
  createLogger,
  currentTraceId,
  runWithRequestId,
  tracingActive,
  type Logger,
} from '@switchyard/observability';
import { stopTracing } from '@switchyard/observability/tracing';
import { type FastifyReply, type FastifyRequest, type FastifyServerFactoryHandler } from 'fastify';
import { toApiError } from './api-errors.js';
import { parseJsonBodies } from './json-body.js';
import { drainUnreadBodies } from './unread-body.js';

// How every Switchyard service starts and stops: validated environment, JSON logs,
// request ids, metrics, Fastify, optional Redis transport, graceful shutdown.

/**
 * Serves a request on Node's HTTP server itself, before Fastify routes it: true when it took
 * the request, false to leave it to Fastify.
 */
export type FrontDoor = (request: IncomingMessage, response: ServerResponse) => boolean;

/** A request whose response has finished, as the metrics and the access log see it. */
export interface FinishedRequest {
  id: string;
  method: string;
  /** The route's pattern, not its URL: the metrics' label. */
  route: string;
  status: number;
  elapsedMs: number;
  raw: IncomingMessage;
}

/** What a front door is given of the service: what Fastify's hooks do for its own routes. */
export interface FrontDoorHooks {
  /** Records a finished request: its metrics and its access-log line. */
  finished: (request: FinishedRequest) => void;
  /** True once the service is shutting down: a new request gets a 503. */
  shuttingDown: () => boolean;
}

export interface ServiceDefinition<E extends BaseEnv> {
  name: AppName;
  environment: new () => E;
  module: (env: E) => DynamicModule;
  port: (env: E) => number;
  /**
   * The operations port of a service whose `port` is public (or reachable through a public
   * proxy): `/metrics` is served there and nowhere else, beside its own `/healthz` and
   * `/readyz` (docs/architecture.md, "Operations ports"). Without it, `port` is itself an
   * operations port (router, metering) and serves `/metrics`.
   */
  opsPort?: (env: E) => number;
  bodyLimit?: (env: E) => number;
  /**
   * Limits of their own for some routes, by route URL: smaller for bodies small by nature
   * (logins), refused by their size before any parsing; larger for uploads (audio).
   */
  routeBodyLimits?: Record<string, number>;
  /** False leaves body parsing to the app's own `configure` (the edge reads raw bytes). */
  bodyParser?: boolean;
  /** Proxies (IPs or CIDRs) whose X-Forwarded-For is believed for `request.ip`. */
  trustProxy?: (env: E) => string[];
  /**
   * Whether a caller's X-Request-Id is kept. Internal services keep the id the edge or web
   * app sent; the public edge always makes its own, since ids also key usage records.
   */
  acceptRequestIds?: boolean;
  /**
   * Whether each request (and each message carrying a request id) runs in an
   * AsyncLocalStorage context, so every log line below it shows the id. Even on Node 24,
   * where the context no longer switches promise hooks on, every promise created inside
   * one carries it: about 40 % more instructions for a handler's awaits
   * (docs/performance.md, "Request context"). The edge and the metering worker keep it off
   * and log their ids explicitly.
   */
  requestContext?: boolean;
  /**
   * Whether a request that succeeded (status under 400) gets an access-log line at info, or
   * only at debug. Failures are always logged at info. The edge keeps successes at debug:
   * every one of its requests already has its record in the usage log, and a log line costs
   * it a sixth of its CPU per request (docs/performance.md).
   */
  logSuccessfulRequests?: boolean;
  /** Subscribes the app to the contract's events and requests over Redis. */
  bus?: {
    connection: (env: E) => BusConnection;
    /** The app refuses to start when one of these has no handler. */
    requiredHandlers: (EventName | MessageName)[];
    /**
     * Called each time the bus's subscriber connection is ready, at start and after every
     * reconnection: events published while it was away were not heard, so what they would
     * have changed is read again.
     */
    onSubscribed?: (app: NestFastifyApplication) => void;
  };
  /**
   * How the app answers a request Fastify refuses before routing it (a URL whose
   * percent-encoding does not decode): the edge in its front APIs' shapes. Without it, the
   * admin API's shape.
   */
  replyToRefusal?: (error: Error, request: FastifyRequest, reply: FastifyReply) => void;
  /**
   * Routes served ahead of Fastify, without its routing, hooks or reply (the edge's forwarded
   * routes: docs/architecture.md, "The front door"), built once the app is ready; until then
   * every request goes to Fastify. What Fastify's hooks do for its routes (the request id,
   * the metrics, the access log, the body limit) is the front door's to do for its own.
   */
  frontDoor?: (app: NestFastifyApplication, hooks: FrontDoorHooks) => FrontDoor;
  /** App-specific HTTP set-up (error handlers, parsers, proxies) before the routes are ready. */
  configure?: (app: NestFastifyApplication, env: E, logger: Logger) => void | Promise<void>;
}

function replyInApiShape(error: Error, _request: FastifyRequest, reply: FastifyReply): void {
  const refused = toApiError(error);
  void reply.status(refused.status).send(refused.toBody());
}

const QUIET_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

export interface RunningService<E> {
  app: NestFastifyApplication;
  env: E;
  logger: Logger;
  url: string;
}

/** Builds the app without listening (tests use it with supertest). */
export async function createService<E extends BaseEnv>(
  definition: ServiceDefinition<E>,
  env: E,
  logger: Logger,
): Promise<NestFastifyApplication> {
  const bodyLimit = definition.bodyLimit?.(env) ?? 1024 * 1024;
  // Built once the app is ready; the server exists before it.
  const door: { open?: FrontDoor } = {};
  const adapter = new FastifyAdapter({
    ...(definition.frontDoor
      ? {
          serverFactory: (handler: FastifyServerFactoryHandler, options: Record<string, unknown>) =>
            serverBehind(handler, options, door),
        }
      : {}),
    bodyLimit,
    genReqId:
      definition.acceptRequestIds === false
        ? () => randomUUID()
        : (request: { headers: Record<string, unknown> }) =>
            acceptRequestId(request.headers[REQUEST_ID_HEADER]),
    ...(definition.trustProxy ? { trustProxy: definition.trustProxy(env) } : {}),
    requestIdHeader: false,
    return503OnClosing: true,
    frameworkErrors: definition.replyToRefusal ?? replyInApiShape,
  });
  const app = await NestFactory.create<NestFastifyApplication>(definition.module(env), adapter, {
    logger: new NestLoggerBridge(logger),
    abortOnError: false,
    bodyParser: definition.bodyParser ?? true,
  });
  const routeBodyLimits = definition.routeBodyLimits;
  if (routeBodyLimits) {
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onRoute', (route) => {
        const limit = routeBodyLimits[route.url];
        if (limit !== undefined) route.bodyLimit = limit;
      });
  }
  if (definition.bodyParser ?? true) parseJsonBodies(app, bodyLimit);
  drainUnreadBodies(app.getHttpAdapter().getInstance(), bodyLimit);
  if (!definition.opsPort) {
    const registry = app.get(Registry, { strict: false });
    app
      .getHttpAdapter()
      .getInstance()
      .get('/metrics', async (_request, reply) =>
        reply.header('content-type', METRICS_CONTENT_TYPE).send(await registry.metrics()),
      );
  }
  const finished = recordFinished(app, logger, definition.logSuccessfulRequests ?? true);
  installRequestHooks(app, finished, definition.requestContext ?? true);
  await definition.configure?.(app, env, logger);
  if (definition.bus) {
    const server = new NamespacedRedisServer(definition.bus.connection(env), {
      requestContext: definition.requestContext ?? true,
    });
    const onSubscribed = definition.bus.onSubscribed;
    if (onSubscribed) {
      // Nest calls the listener with which of its pair is ready ('sub' or 'pub') first,
      // though its type declares no argument.
      server.on('ready', (...args: unknown[]) => {
        if (args[0] === 'sub') onSubscribed(app);
      });
    }
    app.connectMicroservice({ strategy: server }, { inheritAppConfig: true });
    await app.startAllMicroservices();
    assertHandlers(server, definition.bus.connection(env).prefix, definition.bus.requiredHandlers);
  }
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  const health = app.get(HealthService, { strict: false });
  door.open = definition.frontDoor?.(app, { finished, shuttingDown: () => health.isShuttingDown });
  return app;
}

/**
 * Node's HTTP server with a front door ahead of Fastify's handler, set up as Fastify sets up
 * a server it makes itself.
 */
function serverBehind(
  fastifyHandler: FastifyServerFactoryHandler,
  options: Record<string, unknown>,
  door: { open?: FrontDoor },
): Server {
  const server = createServer((request, response) => {
    if (!door.open?.(request, response)) fastifyHandler(request, response);
  });
  if (typeof options.keepAliveTimeout === 'number')
    server.keepAliveTimeout = options.keepAliveTimeout;
  if (typeof options.requestTimeout === 'number') server.requestTimeout = options.requestTimeout;
  if (typeof options.connectionTimeout === 'number') server.setTimeout(options.connectionTimeout);
  return server;
}

/**
 * The operations listener of a service with an `opsPort`: `/metrics`, `/healthz` and
 * `/readyz`, nothing else. A plain HTTP server outside the app, so a scrape never reaches
 * the public routes, their hooks or their limits, and they never reach it.
 */
export async function serveOperations(
  app: NestFastifyApplication,
  port: number,
  host: string,
): Promise<Server> {
  const registry = app.get(Registry, { strict: false });
  const health = app.get(HealthService, { strict: false });
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?', 1)[0];
    const send = (status: number, type: string, body: string) => {
      response.writeHead(status, {
        'content-type': type,
        'content-length': Buffer.byteLength(body),
      });
      response.end(body);
    };
    const json = 'application/json; charset=utf-8';
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      send(
        405,
        json,
        JSON.stringify({
          error: {
            code: 'method_not_allowed',
            message: 'Only GET is served on the operations port',
          },
        }),
      );
      return;
    }
    const answer = async () => {
      if (path === '/metrics') return send(200, METRICS_CONTENT_TYPE, await registry.metrics());
      if (path === '/healthz') return send(200, json, JSON.stringify({ status: 'ok' }));
      if (path === '/readyz') {
        const report = await health.readiness();
        return send(report.status === 'ok' ? 200 : 503, json, JSON.stringify(report));
      }
      return send(
        404,
        json,
        JSON.stringify({
          error: {
            code: 'not_found',
            message: `No operations route ${path}; this port serves /metrics, /healthz and /readyz`,
          },
        }),
      );
    };
    answer().catch(() => {
      if (!response.headersSent)
        send(
          500,
          json,
          JSON.stringify({ error: { code: 'internal_error', message: 'Internal error' } }),
        );
      else response.destroy();
    });
  });
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}

function installRequestHooks(
  app: NestFastifyApplication,
  finished: FrontDoorHooks['finished'],
  requestContext: boolean,
): void {
  const fastify = app.getHttpAdapter().getInstance();
  // Probes and scrapes log nothing, so they never need (or switch on) a request context.
  const withContext = (request: { routeOptions: { url?: string } }) =>
    requestContext && !QUIET_ROUTES.has(request.routeOptions.url ?? '');
  const traced = tracingActive();
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    // The HTTP server span is active here: its trace id lets a caller find the trace.
    const traceId = traced ? currentTraceId() : undefined;
    if (traceId) void reply.header(TRACE_ID_HEADER, traceId);
    if (withContext(request)) runWithRequestId(request.id, done);
    else done();
  });
  // Body parsing continues on the socket's callbacks, outside the context above: enter
  // it again for the handler.
  fastify.addHook('preHandler', (request, _reply, done) =>
    withContext(request) ? runWithRequestId(request.id, done) : done(),
  );
  fastify.addHook('onResponse', (request, reply, done) => {
    finished({
      id: request.id,
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: reply.statusCode,
      elapsedMs: reply.elapsedTime,
      raw: request.raw,
    });
    done();
  });
}

function recordFinished(
  app: NestFastifyApplication,
  logger: Logger,
  logSuccessfulRequests: boolean,
): FrontDoorHooks['finished'] {
  const metrics = app.get(HttpMetrics, { strict: false });
  const health = app.get(HealthService, { strict: false });
  return ({ id, method, route, status, elapsedMs, raw }) => {
    metrics.record(method, route, status, elapsedMs / 1000);
    if (!QUIET_ROUTES.has(route)) {
      const level = logSuccessfulRequests || status >= 400 ? 'info' : 'debug';
      logger[level]({ requestId: id, method, route, status, ms: Math.round(elapsedMs) }, 'request');
    }
    // A keep-alive connection that was busy when shutdown began is idle only now; left
    // open it would hold the server (and the drain) until the client's idle timeout.
    if (health.isShuttingDown) raw.socket?.end();
  };
}

function assertHandlers(server: NamespacedRedisServer, prefix: string, required: string[]): void {
  const handled = server.getHandlers();
  const missing = required.filter((name) => !handled.has(inNamespace(prefix, name)));
  if (missing.length > 0) {
    throw new Error(`no handler for required message(s): ${missing.join(', ')}`);
  }
}

/** The entry point of every app's main.ts. */
export async function startService<E extends BaseEnv>(
  definition: ServiceDefinition<E>,
): Promise<RunningService<E>> {
  let env: E;
  try {
    env = loadEnvironment(definition.environment);
  } catch (error) {
    if (error instanceof ConfigurationError) {
      process.stderr.write(`${definition.name}: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger({ service: definition.name, level: env.LOG_LEVEL });
  try {
    const app = await createService(definition, env, logger);
    const host = env.BIND_ADDRESS === '0.0.0.0' ? '127.0.0.1' : env.BIND_ADDRESS;
    const ops = definition.opsPort
      ? await serveOperations(app, definition.opsPort(env), env.BIND_ADDRESS)
      : undefined;
    stopGracefully(app, env, logger, ops);
    const port = definition.port(env);
    await app.listen({ port, host: env.BIND_ADDRESS });
    const url = `http://${host}:${port}`;
    logger.info({ url }, `${definition.name} listening on ${url}`);
    if (definition.opsPort) {
      const opsUrl = `http://${host}:${definition.opsPort(env)}`;
      logger.info({ opsUrl }, `${definition.name} serves /metrics on ${opsUrl}`);
    }
    return { app, env, logger, url };
  } catch (error) {
    logger.fatal({ err: error }, `${definition.name} failed to start`);
    return flushAndExit(logger, 1);
  }
}

/**
 * SIGTERM/SIGINT: readiness turns 503, the server stops accepting and drains in-flight
 * requests and jobs, then connections close. A drain longer than the grace period is cut.
 */
function stopGracefully(
  app: INestApplication,
  env: BaseEnv,
  logger: Logger,
  ops: Server | undefined,
): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining in-flight work');
    setTimeout(() => {
      logger.warn(
        { graceMs: env.SHUTDOWN_GRACE_MS },
        'grace period over; exiting with work still in flight',
      );
      void flushAndExit(logger, 1);
    }, env.SHUTDOWN_GRACE_MS).unref();
    app
      .close()
      .then(() => {
        // Scrapes go on answering through the drain; the listener ends with the app.
        ops?.closeAllConnections();
        ops?.close();
        logger.info('stopped');
        void flushAndExit(logger, 0);
      })
      .catch((error: unknown) => {
        logger.error({ err: error }, 'error while shutting down');
        void flushAndExit(logger, 1);
      });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/** Logs and spans are sent asynchronously: let the last ones out before the process ends. */
async function flushAndExit(logger: Logger, code: number): Promise<never> {
  await stopTracing();
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
  process.exit(code);
}
