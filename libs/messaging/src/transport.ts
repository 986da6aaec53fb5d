import {
  ClientRedis,
  ServerRedis,
  type RedisContext,
  type RedisOptions,
} from '@nestjs/microservices';
import { type RedisEnv } from '@switchyard/config';
import { type Redis } from 'ioredis';
import { currentRequestId, runWithRequestId } from '@switchyard/observability';
import { inNamespace } from './namespace.js';

// Nest's Redis transport with the installation's prefix on every channel, and the
// request id carried in each packet's metadata so logs on both sides share it.

export interface BusConnection {
  url: string;
  prefix: string;
}

/**
 * The installation's namespace on its Redis. Keys live in the URL's database, but pub/sub
 * channels are shared by every database of a server: two installations that differ only in
 * the database index would hear each other's events and routing snapshots. So an index
 * other than 0 is part of the prefix, with a `.` that REDIS_PREFIX itself cannot contain.
 */
export function busConnectionOf(env: Pick<RedisEnv, 'REDIS_URL' | 'REDIS_PREFIX'>): BusConnection {
  const database = Number(new URL(env.REDIS_URL).pathname.slice(1) || 0);
  const prefix = database === 0 ? env.REDIS_PREFIX : `${env.REDIS_PREFIX}.db${database}`;
  return { url: env.REDIS_URL, prefix };
}

type TransportOptions = NonNullable<RedisOptions['options']>;

function transportOptions(url: string): TransportOptions {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: Number(parsed.port || 6379),
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.pathname.length > 1 ? { db: Number(parsed.pathname.slice(1)) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    // Redis restarts must never end a service's subscriptions for good.
    retryAttempts: Number.MAX_SAFE_INTEGER,
    retryDelay: 1_000,
    // Publishing while Redis is away fails at once instead of queueing in memory.
    enableOfflineQueue: false,
  };
}

interface Metadata {
  requestId?: string;
}

export class NamespacedRedisServer extends ServerRedis {
  /** @param options.requestContext false: handle messages outside any request context. */
  constructor(
    private readonly connection: BusConnection,
    options: { requestContext: boolean } = { requestContext: true },
  ) {
    super(transportOptions(connection.url));
    this.setOnProcessingStartHook((_transport, context, done) => {
      const metadata = (context as RedisContext).getArgs()[1] as Metadata | undefined;
      return options.requestContext && metadata?.requestId
        ? runWithRequestId(metadata.requestId, done)
        : done();
    });
  }

  // Used both when handlers are registered and when an incoming channel is matched to
  // one, so it must be idempotent.
  override normalizePattern(pattern: Parameters<ServerRedis['normalizePattern']>[0]): string {
    return inNamespace(this.connection.prefix, super.normalizePattern(pattern));
  }
}

export class NamespacedRedisClient extends ClientRedis {
  constructor(private readonly connection: BusConnection) {
    super(transportOptions(connection.url));
    this.setOnDispatchHook((packet) => {
      const requestId = currentRequestId();
      if (requestId) packet.metadata = { requestId } satisfies Metadata;
    });
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
    for (const client of [this.pubClient, this.subClient]) {
      if (client && client.status !== 'ready') client.disconnect();
    }
    if (this.pubClient?.status !== 'ready') this.pubClient = null as unknown as Redis;
    if (this.subClient?.status !== 'ready') this.subClient = null as unknown as Redis;
    await super.close();
  }
}
