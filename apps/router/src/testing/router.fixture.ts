import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadEnvironment, RouterEnv } from '@switchyard/config';
import {
  ROUTING_SNAPSHOT_KEY,
  type EventName,
  type EventPayload,
  type RoutingSnapshot,
} from '@switchyard/contracts';
import { ChannelStatus, PrismaService } from '@switchyard/db';
import { ChannelsRepository } from '@switchyard/gateway-store';
import { EventBus, inNamespace } from '@switchyard/messaging';
import { createLogger } from '@switchyard/observability';
import { generateSecretKeySpec, SecretCipher } from '@switchyard/security';
import { createService } from '@switchyard/service';
import { Redis } from 'ioredis';
import {
  clearRedisNamespace,
  createTestDatabase,
  testRedisPrefix,
  type TestDatabase,
} from '@switchyard/testing';
import { LeaderLock } from '../leadership/leader-lock.js';
import { routerDefinition } from '../router.definition.js';
import { RoutingAuthority } from '../snapshots/routing-authority.js';

// Real routers for a spec file: built by the router's own definition, over a database and a
// Redis namespace of the file's own, so routers of other files never see these channels.

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface RunningRouter {
  app: NestFastifyApplication;
  authority: RoutingAuthority;
  lock: LeaderLock;
  bus: EventBus;
}

export interface ChannelSetup {
  baseUrl: string;
  /** The upstream secrets, one key each. */
  secrets: string[];
  models?: string[];
  modelMapping?: Record<string, string>;
  status?: ChannelStatus;
}

export class RouterTestbed {
  private readonly secretKeys = generateSecretKeySpec('router-spec');
  readonly cipher = new SecretCipher([this.secretKeys]);
  /** Keys of the routers' namespace, as the routers read and write them. */
  readonly redis: Redis;
  private readonly subscriber = new Redis(redisUrl);
  private readonly routers: RunningRouter[] = [];
  private readonly seen: { event: string; data: unknown }[] = [];
  private channelCount = 0;

  private constructor(
    private readonly database: TestDatabase,
    readonly prisma: PrismaService,
    readonly channels: ChannelsRepository,
    readonly prefix: string,
  ) {
    this.redis = new Redis(redisUrl, { keyPrefix: inNamespace(prefix, '') });
  }

  static async open(): Promise<RouterTestbed> {
    const database = await createTestDatabase();
    const prisma = new PrismaService({ url: database.url, poolSize: 2 });
    const testbed = new RouterTestbed(
      database,
      prisma,
      new ChannelsRepository(prisma),
      testRedisPrefix(),
    );
    await testbed.listen();
    return testbed;
  }

  /** Every bus event of the namespace, in order of arrival. */
  private async listen(): Promise<void> {
    await this.subscriber.psubscribe(inNamespace(this.prefix, '*'));
    this.subscriber.on('pmessage', (_pattern, channel: string, message: string) => {
      const { data } = JSON.parse(message) as { data: unknown };
      this.seen.push({ event: channel.slice(this.prefix.length + 1), data });
    });
  }

  events<E extends EventName>(event: E): EventPayload<E>[] {
    return this.seen.filter((e) => e.event === event).map((e) => e.data as EventPayload<E>);
  }

  async startRouter(env: Record<string, string> = {}): Promise<RunningRouter> {
    const app = await createService(
      routerDefinition,
      loadEnvironment(RouterEnv, {
        ...process.env,
        DATABASE_URL: this.database.url,
        REDIS_URL: redisUrl,
        REDIS_PREFIX: this.prefix,
        SECRET_KEYS: this.secretKeys,
        PROBE_INTERVAL_MS: '3600000',
        ...env,
      }),
      createLogger({ service: 'router', level: 'silent' }),
    );
    const router = {
      app,
      authority: app.get(RoutingAuthority),
      lock: app.get(LeaderLock),
      bus: app.get(EventBus),
    };
    this.routers.push(router);
    return router;
  }

  async addChannel(setup: ChannelSetup): Promise<{ id: number; keys: number[] }> {
    this.channelCount += 1;
    const created = await this.channels.create(
      this.prisma,
      {
        name: `channel ${this.channelCount}`,
        kind: 'aggregated',
        baseUrl: setup.baseUrl,
        models: setup.models ?? ['m'],
        modelMapping: setup.modelMapping ?? {},
        status: setup.status ?? ChannelStatus.enabled,
      },
      setup.secrets.map((secret, i) => ({
        secretCiphertext: this.cipher.seal(secret),
        fingerprint: `${this.channelCount}-${i}`.padEnd(64, '0'),
        lastFour: secret.slice(-4),
      })),
    );
    return { id: created.id, keys: created.keys.map((key) => key.id) };
  }

  /** Sets key statuses directly, as an administrator's or the router's past change left them. */
  async setKeyStatus(keyId: number, status: ChannelStatus): Promise<void> {
    await this.channels.updateKey(this.prisma, keyId, { status });
  }

  async keyStatuses(channelId: number): Promise<ChannelStatus[]> {
    return (await this.channels.findById(channelId))!.keys.map((key) => key.status);
  }

  /** The snapshot the leader stored for edges, if any. */
  async storedSnapshot(): Promise<RoutingSnapshot | null> {
    const stored = await this.redis.get(ROUTING_SNAPSHOT_KEY);
    return stored ? (JSON.parse(stored) as RoutingSnapshot) : null;
  }

  async stopRouter(router: RunningRouter): Promise<void> {
    this.routers.splice(this.routers.indexOf(router), 1);
    await router.app.close();
  }

  async close(): Promise<void> {
    await Promise.all(this.routers.splice(0).map((router) => router.app.close()));
    this.subscriber.disconnect();
    this.redis.disconnect();
    await this.prisma.$disconnect();
    await this.database.drop();
    await clearRedisNamespace(redisUrl, this.prefix);
  }
}
