import {
  Global,
  Inject,
  Injectable,
  Logger,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Redis } from 'ioredis';
import { BUS_CLIENT, EventBus } from './event-bus.js';
import { inNamespace } from './namespace.js';
import { NamespacedRedisClient, type BusConnection } from './transport.js';

export const REDIS = Symbol('REDIS');
const CONNECTION = Symbol('BUS_CONNECTION');

/** A Redis client for keys: every key it touches is in the installation's namespace. */
export type RedisClient = Redis;

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
export class QueueConnection {
  constructor(@Inject(CONNECTION) private readonly connection: BusConnection) {}

  get url(): string {
    return this.connection.url;
  }

  /** BullMQ's key prefix: the namespace, so queues of two installations never meet. */
  get prefix(): string {
    return inNamespace(this.connection.prefix, 'bull');
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
  const client = new Redis(connection.url, {
    keyPrefix: inNamespace(connection.prefix, ''),
    // Fail fast while Redis is away; callers decide what to do (spool, 503, retry).
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
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
