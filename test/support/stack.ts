import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  Events,
  ROUTING_SNAPSHOT_KEY,
  type EventName,
  type EventPayload,
  type RoutingSnapshot,
} from '@switchyard/contracts';
import {
  busConnectionOf,
  createIoRedis,
  NamespacedRedisClient,
  redisConnectionOptions,
  type AnyRedis,
} from '@switchyard/messaging';
import {
  generateGatewayToken,
  generateSecretKeySpec,
  lastFour,
  SecretCipher,
  sha256Hex,
} from '@switchyard/security';
import {
  clearRedisNamespace,
  createTestDatabase,
  waitFor,
  query,
  startApp,
  type AppName,
  type AppProcess,
  type TestDatabase,
} from '@switchyard/testing';
import OpenAI from 'openai';
import { lastValueFrom } from 'rxjs';

// A whole gateway for a test file: real mock-upstream, router and edge processes on the
// run's database and Redis namespace. Channels and tokens are written the way the admin
// service writes them (sealed keys, hashed tokens) and announced with the same events.

export interface StackOptions {
  /** A Redis of the test's own (to stop and restart it); the run's shared one otherwise. */
  redisUrl?: string;
  /** With `redisUrl` for credentials: the nodes of a Redis Cluster of the test's own. */
  redisClusterNodes?: string;
  /**
   * The Postgres server the stack's database is made on: a test's own (to stop and restart
   * it); the run's otherwise.
   */
  postgresUrl?: string;
  /**
   * Where the apps reach the stack's database, given its direct URL: through a PgBouncer
   * of the test's own, say. The test itself reads the database directly.
   */
  appDatabaseUrl?: (databaseUrl: string) => string;
  edges?: number;
  routers?: number;
  /** Runs metering workers too (usage settles into Postgres; quotas run out); true is one. */
  metering?: boolean | number;
  /** Runs the admin service behind the edge's /api, with this first administrator. */
  admin?: { username: string; password: string };
  /** Admin replicas with `admin`, one by default; the edge's /api reaches the first. */
  adminReplicas?: number;
  mockAccounts?: string;
  /** For every app, the mock upstream included. */
  env?: Record<string, string>;
  edgeEnv?: Record<string, string>;
  routerEnv?: Record<string, string>;
}

export interface ChannelSpec {
  name?: string;
  models: string[];
  keys: string[];
  baseUrl?: string;
  priority?: number;
  weight?: number;
  groups?: string[];
  kind?: 'single' | 'aggregated';
  provider?: 'openai' | 'azure' | 'anthropic' | 'gemini' | 'bedrock';
  providerSettings?: Record<string, string>;
  modelMapping?: Record<string, string>;
  limits?: { rpm?: number; tpm?: number; concurrency?: number };
  /** The channel's own wait for response headers (the edge's default otherwise). */
  firstByteTimeoutMs?: number;
  status?: 'enabled' | 'disabled';
}

export interface TokenSpec {
  name?: string;
  quota?: number | null;
  usedQuota?: number;
  models?: string[];
  allowIps?: string[];
  group?: string;
  rateLimit?: number | null;
  expiresAt?: Date | null;
  status?: 'enabled' | 'disabled' | 'exhausted';
}

export interface MockAccountStats {
  key: string;
  requests: number;
  served: number;
  rateLimited: number;
  failed: number;
  maxInFlight: number;
  maxRequestsPerWindow: number;
}

/**
 * The bound of a `beforeAll` that starts a stack: its apps start one after another, each
 * within APP_START_TIMEOUT_MS, which is what makes a busy machine slow here
 * (docs/architecture.md, "Waiting in tests"). A stack that hangs still fails in minutes.
 */
export const STACK_START_TIMEOUT_MS = 180_000;

export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

export class Stack {
  /**
   * A database of its own, made by `start`: each stack bootstraps its first administrator
   * and chat admin, which an earlier spec's rows in a shared database would prevent.
   */
  databaseUrl = process.env.DATABASE_URL!;
  private database: TestDatabase | undefined;
  readonly redisUrl: string;
  /**
   * A namespace of its own inside the run's: specs share the run's Redis, and state one
   * stack leaves there (a login throttle after thousands of fuzzed logins, say) must not
   * reach the next. Cleared when the stack stops.
   */
  readonly prefix = `${process.env.REDIS_PREFIX!}-${randomBytes(4).toString('hex')}`;
  readonly secretKeys = generateSecretKeySpec('k1');
  readonly cipher = new SecretCipher([this.secretKeys]);
  mock!: AppProcess;
  routers: AppProcess[] = [];
  edges: AppProcess[] = [];
  meterings: AppProcess[] = [];
  admins: AppProcess[] = [];
  private bus!: NamespacedRedisClient;
  private redis!: AnyRedis;
  spoolDir = '';

  constructor(private readonly options: StackOptions = {}) {
    this.redisUrl = options.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  }

  private get redisCluster(): { REDIS_CLUSTER_NODES?: string } {
    const nodes = this.options.redisClusterNodes;
    return nodes ? { REDIS_CLUSTER_NODES: nodes } : {};
  }

  get edge(): AppProcess {
    return this.edges[0]!;
  }

  get metering(): AppProcess | undefined {
    return this.meterings[0];
  }

  get admin(): AppProcess | undefined {
    return this.admins[0];
  }

  get env(): Record<string, string> {
    return {
      DATABASE_URL: this.options.appDatabaseUrl?.(this.databaseUrl) ?? this.databaseUrl,
      REDIS_URL: this.redisUrl,
      ...this.redisCluster,
      REDIS_PREFIX: this.prefix,
      SECRET_KEYS: this.secretKeys,
      ...this.options.env,
    };
  }

  async start(): Promise<this> {
    this.database = await createTestDatabase(this.options.postgresUrl ?? process.env.DATABASE_URL);
    this.databaseUrl = this.database.url;
    this.spoolDir = await mkdtemp(path.join(tmpdir(), 'sy-spool-'));
    // Through the suite's own factory: the stack may run on Sentinel (test/scale).
    this.bus = new NamespacedRedisClient(
      busConnectionOf({
        REDIS_URL: this.redisUrl,
        REDIS_PREFIX: this.prefix,
        ...this.redisCluster,
      }),
    );
    await this.bus.connect();
    this.redis = createIoRedis(redisConnectionOptions(this.redisUrl, this.redisCluster));
    // While a fault is on, its reconnection attempts are expected, not worth a stack trace.
    this.redis.on('error', () => undefined);
    this.mock = await startApp('mock-upstream', {
      env: { ...this.options.env, MOCK_ACCOUNTS: this.options.mockAccounts ?? 'sk-mock-default' },
    });
    for (let i = 0; i < (this.options.routers ?? 1); i += 1) await this.startRouter();
    const meteringWorkers = Number(this.options.metering ?? 0);
    for (let i = 0; i < meteringWorkers; i += 1) await this.startMetering();
    const admin = this.options.admin;
    for (let i = 0; admin && i < (this.options.adminReplicas ?? 1); i += 1) {
      this.admins.push(
        await startApp('admin', {
          env: { ...this.env, ADMIN_USERNAME: admin.username, ADMIN_PASSWORD: admin.password },
          readyPath: '/readyz',
        }),
      );
    }
    for (let i = 0; i < (this.options.edges ?? 1); i += 1) await this.startEdge();
    return this;
  }

  async startRouter(env: Record<string, string> = {}): Promise<AppProcess> {
    const router = await startApp('router', {
      env: { ...this.env, PROBE_INTERVAL_MS: '500', ...this.options.routerEnv, ...env },
    });
    this.routers.push(router);
    return router;
  }

  async startMetering(): Promise<AppProcess> {
    const metering = await startApp('metering', { env: this.env, readyPath: '/readyz' });
    this.meterings.push(metering);
    return metering;
  }

  async startEdge(env: Record<string, string> = {}): Promise<AppProcess> {
    const edge = await startApp('edge', {
      env: {
        ...this.env,
        USAGE_SPOOL_DIR: this.spoolDir,
        ADMIN_URL: this.admin?.url ?? 'http://127.0.0.1:9',
        ...this.options.edgeEnv,
        ...env,
      },
      readyPath: '/readyz',
    });
    this.edges.push(edge);
    return edge;
  }

  async stop(): Promise<void> {
    const apps = [...this.edges, ...this.routers, ...this.meterings, ...this.admins, this.mock];
    await Promise.all(apps.filter((app) => app !== undefined).map((app) => app.stop()));
    await this.bus?.close();
    this.redis?.disconnect();
    // A Sentinel or cluster topology is the test's own, and goes with it.
    if (redisConnectionOptions(this.redisUrl, this.redisCluster).mode === 'standalone')
      await clearRedisNamespace(this.redisUrl, this.prefix);
    await this.database?.drop();
  }

  /**
   * Waits until the router has published a snapshot in which the channel is (or is not)
   * routable, and every edge has installed that snapshot or a later one.
   */
  async routingSettled(channelId: number, routable = true): Promise<void> {
    await this.snapshotSettled(
      (snapshot) => snapshot.channels.some((c) => c.id === channelId) === routable,
      `channel ${channelId} ${routable ? 'in' : 'out of'} the routing snapshot`,
    );
  }

  /**
   * Waits until the router has published a snapshot that satisfies `holds`, and every edge
   * has installed that snapshot or a later one.
   */
  async snapshotSettled(
    holds: (snapshot: RoutingSnapshot) => boolean,
    what: string,
  ): Promise<void> {
    const version = await waitFor(
      async () => {
        const stored = await this.redis.get(`${this.prefix}:${ROUTING_SNAPSHOT_KEY}`);
        if (!stored) return undefined;
        const snapshot = JSON.parse(stored) as RoutingSnapshot;
        return holds(snapshot) ? snapshot.version : undefined;
      },
      { what },
    );
    for (const edge of this.edges) {
      await waitFor(async () => (await edgeSnapshotVersion(edge)) >= version, {
        what: `snapshot ${version} on ${edge.url}`,
      });
    }
  }

  async publish<E extends EventName>(event: E, payload: EventPayload<E>): Promise<void> {
    await lastValueFrom(this.bus.emit(event, payload), { defaultValue: undefined });
  }

  /** A channel as the admin service would store it; resolves once every edge routes to it. */
  async createChannel(spec: ChannelSpec): Promise<{ id: number; keyIds: number[] }> {
    const [channel] = await query<{ id: number }>(
      this.databaseUrl,
      `INSERT INTO "Channel" (name, kind, "baseUrl", models, "modelMapping", priority, weight, groups, status,
                              "rpmLimit", "tpmLimit", "concurrencyLimit", provider, "providerSettings",
                              "firstByteTimeoutMs", "updatedAt")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, now()) RETURNING id`,
      [
        spec.name ?? uniqueName('channel'),
        spec.kind ?? (spec.keys.length > 1 ? 'aggregated' : 'single'),
        spec.baseUrl ?? this.mock.url,
        spec.models,
        JSON.stringify(spec.modelMapping ?? {}),
        spec.priority ?? 0,
        spec.weight ?? 1,
        spec.groups ?? ['default'],
        spec.status ?? 'enabled',
        spec.limits?.rpm ?? null,
        spec.limits?.tpm ?? null,
        spec.limits?.concurrency ?? null,
        spec.provider ?? 'openai',
        JSON.stringify(spec.providerSettings ?? {}),
        spec.firstByteTimeoutMs ?? null,
      ],
    );
    const keyIds: number[] = [];
    for (const secret of spec.keys) {
      const [key] = await query<{ id: number }>(
        this.databaseUrl,
        `INSERT INTO "ChannelKey" ("channelId", "secretCiphertext", fingerprint, "lastFour") VALUES ($1, $2, $3, $4) RETURNING id`,
        [channel!.id, this.cipher.seal(secret), sha256Hex(secret), lastFour(secret)],
      );
      keyIds.push(key!.id);
    }
    await this.publish(Events.ChannelChanged, { channelId: channel!.id, action: 'created' });
    if ((spec.status ?? 'enabled') === 'enabled' && this.edges.length > 0)
      await this.routingSettled(channel!.id);
    return { id: channel!.id, keyIds };
  }

  async setChannelStatus(id: number, status: 'enabled' | 'disabled'): Promise<void> {
    await query(
      this.databaseUrl,
      `UPDATE "Channel" SET status = $2, "updatedAt" = now() WHERE id = $1`,
      [id, status],
    );
    await this.publish(Events.ChannelChanged, { channelId: id, action: 'updated' });
  }

  async createToken(spec: TokenSpec = {}): Promise<{ id: number; key: string; keyHash: string }> {
    const key = generateGatewayToken();
    const keyHash = sha256Hex(key);
    const [token] = await query<{ id: number }>(
      this.databaseUrl,
      `INSERT INTO "Token" (name, "keyHash", "lastFour", status, "expiresAt", quota, "usedQuota", models, "allowIps", "group", "rateLimit", "updatedAt")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now()) RETURNING id`,
      [
        spec.name ?? uniqueName('token'),
        keyHash,
        lastFour(key),
        spec.status ?? 'enabled',
        spec.expiresAt ?? null,
        spec.quota ?? null,
        spec.usedQuota ?? 0,
        spec.models ?? [],
        spec.allowIps ?? [],
        spec.group ?? 'default',
        spec.rateLimit ?? null,
      ],
    );
    await this.publish(Events.TokenChanged, { tokenId: token!.id, keyHash, action: 'created' });
    return { id: token!.id, key, keyHash };
  }

  client(
    tokenKey: string,
    options: { edge?: AppProcess; timeout?: number; headers?: Record<string, string> } = {},
  ): OpenAI {
    return new OpenAI({
      apiKey: tokenKey,
      baseURL: `${(options.edge ?? this.edge).url}/v1`,
      maxRetries: 0,
      timeout: options.timeout ?? 20_000,
      defaultHeaders: options.headers,
    });
  }

  /** Waits until every edge routes `model` for `tokenKey` (the snapshot has arrived). */
  async routable(tokenKey: string, model: string): Promise<void> {
    for (const edge of this.edges) {
      await waitFor(
        async () => {
          const response = await fetch(`${edge.url}/v1/models`, {
            headers: { authorization: `Bearer ${tokenKey}` },
          });
          const body = (await response.json()) as { data?: { id: string }[] };
          return body.data?.some((m) => m.id === model) ? true : undefined;
        },
        { what: `${model} routable on ${edge.url}` },
      );
    }
  }

  async mockControl(method: string, route: string, body?: unknown): Promise<Response> {
    const response = await fetch(`${this.mock.url}/_mock${route}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok)
      throw new Error(
        `mock control ${method} ${route}: ${response.status} ${await response.text()}`,
      );
    return response;
  }

  /** Adds (or replaces) an account of the mock provider. */
  async mockAccount(
    key: string,
    account: {
      rpm?: number;
      tpm?: number;
      concurrency?: number;
      banned?: boolean;
      /** Its refusals quote the whole key (apps/mock-upstream, account-pool.ts). */
      echoKey?: boolean;
    } = {},
  ): Promise<void> {
    await this.mockControl('PUT', `/accounts/${encodeURIComponent(key)}`, account);
  }

  async mockFault(fault: Record<string, unknown>): Promise<void> {
    await this.mockControl('POST', '/faults', fault);
  }

  async mockRequests(
    key: string,
  ): Promise<{ path: string; headers: Record<string, string>; body: Record<string, unknown> }[]> {
    return (await (
      await this.mockControl('GET', `/accounts/${encodeURIComponent(key)}/requests`)
    ).json()) as {
      path: string;
      headers: Record<string, string>;
      body: Record<string, unknown>;
    }[];
  }

  async mockStats(key: string): Promise<MockAccountStats> {
    const stats = (await (await this.mockControl('GET', '/accounts')).json()) as MockAccountStats[];
    return (
      stats.find((s) => s.key === key) ?? {
        key,
        requests: 0,
        served: 0,
        rateLimited: 0,
        failed: 0,
        maxInFlight: 0,
        maxRequestsPerWindow: 0,
      }
    );
  }
}

/** The routing snapshot version an edge has installed, from its metrics. */
export async function edgeSnapshotVersion(edge: AppProcess): Promise<number> {
  const metrics = await (await fetch(`${edge.opsUrl}/metrics`)).text();
  const match = /^edge_routing_snapshot_version(?:\{[^}]*\})? (\d+)/m.exec(metrics);
  return match ? Number(match[1]) : 0;
}

/** A fresh mock account key, registered with the mock provider. */
export async function freshAccount(
  stack: Stack,
  account: Parameters<Stack['mockAccount']>[1] = {},
): Promise<string> {
  const key = `sk-mock-${randomBytes(6).toString('hex')}`;
  await stack.mockAccount(key, account);
  return key;
}

export type { AppName };
