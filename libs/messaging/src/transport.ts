import {
  ClientRedis,
  ServerRedis,
  type RedisContext,
  type RedisOptions,
} from '@nestjs/microservices';
import { type RedisEnv } from '@switchyard/config';
import { type Redis, type RedisOptions as IoRedisOptions } from 'ioredis';
import {
  currentRequestId,
  injectTraceContext,
  runWithRequestId,
  startConsumerSpan,
  type StartedSpan,
  type TraceCarrier,
} from '@switchyard/observability';
import { inNamespace } from './namespace.js';
import {
  createIoRedis,
  redisConnectionOptions,
  redisDatabaseOf,
  type RedisConnectionOptions,
} from './redis-connection.js';

// Nest's Redis transport with the installation's prefix on every channel, and the
// request id and W3C trace context carried in each packet's metadata: logs on both sides
// share the id, and the handler's span is a child of the sender's (docs/operations.md,
// "Traces").

export interface BusConnection {
  /** REDIS_URL as given: in the plain form, what BullMQ and tools connect to. */
  url: string;
  prefix: string;
  /**
   * How every client reaches Redis: one server, Sentinel's master, or a cluster. Absent:
   * the plain form of `url` (busConnectionOf always sets it).
   */
  redis?: RedisConnectionOptions;
}

export function redisOf(connection: BusConnection): RedisConnectionOptions {
  return connection.redis ?? redisConnectionOptions(connection.url);
}

/**
 * The installation's namespace on its Redis. Keys live in the URL's database, but pub/sub
 * channels are shared by every database of a server: two installations that differ only in
 * the database index would hear each other's events and routing snapshots. So an index
 * other than 0 is part of the prefix, with a `.` that REDIS_PREFIX itself cannot contain.
 */
export function busConnectionOf(
  env: Pick<RedisEnv, 'REDIS_URL' | 'REDIS_PREFIX'> & { REDIS_CLUSTER_NODES?: string },
): BusConnection {
  const redis = redisConnectionOptions(env.REDIS_URL, env);
  const database = redisDatabaseOf(redis);
  const prefix = database === 0 ? env.REDIS_PREFIX : `${env.REDIS_PREFIX}.db${database}`;
  return { url: env.REDIS_URL, prefix, redis };
}

type TransportOptions = NonNullable<RedisOptions['options']>;

function transportOptions(connection: BusConnection): TransportOptions {
  const always = {
    // Redis restarts must never end a service's subscriptions for good.
    retryAttempts: Number.MAX_SAFE_INTEGER,
    retryDelay: 1_000,
    // Publishing while Redis is away fails at once instead of queueing in memory.
    enableOfflineQueue: false,
  };
  // Nest types ioredis's options with its own copy of them: the same fields.
  const redis = redisOf(connection);
  if (redis.mode !== 'standalone') return { ...redis.options, ...always } as TransportOptions;
  const parsed = new URL(connection.url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.pathname.length > 1 ? { db: Number(parsed.pathname.slice(1)) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    ...always,
  };
}

/**
 * Nest builds its pub/sub pair with `new Redis(options)`, which has no cluster form: in
 * cluster mode the pair comes from our factory, with Nest's own retry and lazy connect.
 * A Cluster has every command and event the transport uses (publish, (p)subscribe,
 * message, connect, quit, status), though not Redis's type.
 */
function clusterClient(connection: BusConnection, options: object | undefined): Redis | undefined {
  const redis = redisOf(connection);
  if (redis.mode !== 'cluster') return undefined;
  const {
    retryAttempts: _a,
    retryDelay: _d,
    ...ioredis
  } = (options ?? {}) as IoRedisOptions & Partial<Record<'retryAttempts' | 'retryDelay', number>>;
  return createIoRedis(redis, { ...ioredis, lazyConnect: true }) as unknown as Redis;
}

interface Metadata extends TraceCarrier {
  requestId?: string;
}

export class NamespacedRedisServer extends ServerRedis {
  /** @param options.requestContext false: handle messages outside any request context. */
  constructor(
    private readonly connection: BusConnection,
    options: { requestContext: boolean } = { requestContext: true },
  ) {
    super(transportOptions(connection));
    // Each message's span, from the start hook to the end hook (Nest runs the end hook
    // once per message, also when the handler throws).
    const spans = new WeakMap<object, StartedSpan>();
    // Nest types the hook as returning void, yet hands the returned promise to the transport,
    // which catches its rejection: it must be returned, not dropped.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- see above
    this.setOnProcessingStartHook((_transport, context, done) => {
      const [channel, metadata] = (context as RedisContext).getArgs() as [
        string,
        Metadata | undefined,
      ];
      const requestId = options.requestContext ? metadata?.requestId : undefined;
      const run = requestId ? () => runWithRequestId(requestId, done) : done;
      const traced = startConsumerSpan(`bus ${channel}`, metadata, {
        'messaging.system': 'redis',
        'messaging.destination.name': channel,
      });
      if (!traced) return run();
      spans.set(context as object, traced);
      return traced.run(run);
    });
    this.setOnProcessingEndHook((_transport, context) => {
      spans.get(context as object)?.end();
      spans.delete(context as object);
    });
  }

  override async createRedisClient(): Promise<Redis> {
    // Nest types its client `any` so as not to depend on ioredis; what it builds is one.
    return (
      clusterClient(this.connection, this.getClientOptions()) ??
      (super.createRedisClient() as Promise<Redis>)
    );
  }

  // Used both when handlers are registered and when an incoming channel is matched to
  // one, so it must be idempotent.
  override normalizePattern(pattern: Parameters<ServerRedis['normalizePattern']>[0]): string {
    return inNamespace(this.connection.prefix, super.normalizePattern(pattern));
  }
}

export class NamespacedRedisClient extends ClientRedis {
  constructor(private readonly connection: BusConnection) {
    super(transportOptions(connection));
    this.setOnDispatchHook((packet) => {
      // Nest's packet metadata is a record of strings; `Metadata` names its fields.
      const metadata: Record<string, string> & Metadata = {};
      const requestId = currentRequestId();
      if (requestId) metadata.requestId = requestId;
      injectTraceContext(metadata);
      if (Object.keys(metadata).length > 0) packet.metadata = metadata;
    });
  }

  override async createClient(): Promise<Redis> {
    // As the server's: Nest's `any` is an ioredis client.
    return (
      clusterClient(this.connection, this.getClientOptions()) ??
      (super.createClient() as Promise<Redis>)
    );
  }

  override normalizePattern(pattern: Parameters<ClientRedis['normalizePattern']>[0]): string {
    return inNamespace(this.connection.prefix, super.normalizePattern(pattern));
  }

  /**
   * Nest's close() quits only the pub/sub pair that already exists, but connect() creates
   * the pair across awaits: closed in that window, the pair opens afterwards and keeps the
   * process alive for good. And quit() is refused while a client is still (re)connecting.
   * So let the connection attempt settle (it does within the connect timeout, Redis up or
   * not), then drop the clients that are not ready and quit the others.
   */
  override async close(): Promise<void> {
    await this.connectionPromise?.catch(() => undefined);
    // Nest declares its clients as `any`; they are ioredis clients, or null before connect().
    const pub = this.pubClient as Redis | null;
    const sub = this.subClient as Redis | null;
    for (const client of [pub, sub]) {
      if (client && client.status !== 'ready') client.disconnect();
    }
    if (pub?.status !== 'ready') this.pubClient = null;
    if (sub?.status !== 'ready') this.subClient = null;
    await super.close();
  }
}
