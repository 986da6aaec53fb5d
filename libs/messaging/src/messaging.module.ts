import {
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { type ConnectionOptions } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import {
  createIoRedis,
  queuePrefixFor,
  type AnyRedis,
  type RedisConnectionOptions,
  writeOncePerTurn,
} from './redis-connection.js';
import { BUS_CLIENT, EventBus } from './event-bus.js';
import { inNamespace } from './namespace.js';
import { NamespacedRedisClient, redisOf, type BusConnection } from './transport.js';

export const REDIS = Symbol('REDIS');
const CONNECTION = Symbol('BUS_CONNECTION');

/**
 * A Redis client for keys: every key it touches is in the installation's namespace. A
 * cluster client in cluster mode: a script's or a transaction's keys then share one hash
 * tag (docs/scaling.md, "Redis").
 */
export type RedisClient = AnyRedis;

/** Readiness: Redis answers PING. */
@Injectable()
export class RedisReadiness {
  readonly name = 'redis';
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  async check(): Promise<void> {
    await this.redis.ping();
  }
}

/** Where BullMQ queues of this installation live; BullMQ keeps its own connections. */
@Injectable()
export class QueueConnection implements OnApplicationShutdown {
  /** Cluster clients handed to BullMQ, which does not close a connection it was given. */
  private readonly clusters: AnyRedis[] = [];

  constructor(@Inject(CONNECTION) private readonly connection: BusConnection) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled(
      this.clusters.map((client) => client.quit().catch(() => client.disconnect())),
    );
  }

  /** REDIS_URL as given (for messages; connect with `connectionOptions` or `createClient`). */
  get url(): string {
    return this.connection.url;
  }

  get redis(): RedisConnectionOptions {
    return redisOf(this.connection);
  }

  /**
   * BullMQ's key prefix: the namespace, so queues of two installations never meet; in a
   * cluster, a hash tag too, so that every key of a queue is on one slot.
   */
  get prefix(): string {
    return queuePrefixFor(this.redis, inNamespace(this.connection.prefix, 'bull'));
  }

  /**
   * BullMQ's `connection`: options from which it opens (and closes) its own clients, one
   * server or Sentinel's master; in a cluster, a cluster client, which BullMQ duplicates for
   * its blocking connections and the caller closes. BullMQ's workers need
   * `maxRetriesPerRequest: null`: BullMQ sets it on the clients it opens, and it is the
   * cluster client's default here.
   */
  connectionOptions(options: RedisOptions = {}): ConnectionOptions {
    const redis = this.redis;
    switch (redis.mode) {
      case 'standalone':
        return { ...options, url: redis.url } as ConnectionOptions;
      case 'sentinel':
        // BullMQ types ioredis's options with its own copy of them: the same fields.
        return { ...redis.options, ...options } as ConnectionOptions;
      case 'cluster': {
        const client = createIoRedis(redis, { maxRetriesPerRequest: null, ...options });
        this.clusters.push(client);
        return client;
      }
    }
  }

  /** A client of its own for the queue's keys (no key prefix: BullMQ adds its own). */
  createClient(options: RedisOptions = {}): AnyRedis {
    return createIoRedis(this.redis, options);
  }
}

@Injectable()
class ConnectionCloser implements OnApplicationShutdown {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(BUS_CLIENT) private readonly client: NamespacedRedisClient,
    private readonly bus: EventBus,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    this.bus.close();
    // quit() is refused while still connecting, and the connection would then open anyway.
    await Promise.allSettled([
      this.client.close(),
      this.redis.quit().catch(() => this.redis.disconnect()),
    ]);
  }
}

const logger = new Logger('Redis');

export function createRedisClient(connection: BusConnection): RedisClient {
  const client = createIoRedis(redisOf(connection), {
    keyPrefix: inNamespace(connection.prefix, ''),
    // Fail fast while Redis is away; callers decide what to do (spool, 503, retry).
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  // A cluster client keeps one connection per node; its commands go out as they come.
  if (client instanceof Redis) writeOncePerTurn(client);
  // Reconnection is automatic; say once that the connection was lost, not at every retry.
  let lastError = '';
  client.on('error', (error: Error) => {
    if (error.message !== lastError) logger.warn(`connection problem: ${error.message}`);
    lastError = error.message;
  });
  client.on('ready', () => {
    if (lastError !== '') logger.log('connection restored');
    lastError = '';
  });
  return client;
}

/**
 * Resolves once the client takes commands. It queues none while it connects (above), so a
 * short-lived program (a CLI command) that needs Redis at once must wait for `ready`.
 */
export async function redisReady(client: RedisClient, timeoutMs = 10_000): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('end', onEnd);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => done();
    const onEnd = () => done(new Error('the Redis connection ended before it was ready'));
    const timer = setTimeout(
      () => done(new Error(`Redis was not ready within ${timeoutMs} ms (${client.status})`)),
      timeoutMs,
    );
    client.on('ready', onReady);
    client.on('end', onEnd);
  });
}

/** Redis for keys, events and requests; global, closed after everything else has drained. */
@Global()
@Module({})
export class MessagingModule {
  static forRoot(connection: BusConnection): DynamicModule {
    return {
      module: MessagingModule,
      providers: [
        { provide: CONNECTION, useValue: connection },
        { provide: REDIS, useFactory: () => createRedisClient(connection) },
        { provide: BUS_CLIENT, useFactory: () => new NamespacedRedisClient(connection) },
        EventBus,
        RedisReadiness,
        QueueConnection,
        ConnectionCloser,
      ],
      exports: [REDIS, EventBus, RedisReadiness, QueueConnection],
    };
  }
}
