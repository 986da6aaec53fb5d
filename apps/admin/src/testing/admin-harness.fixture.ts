import { Module, type Type } from '@nestjs/common';
import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AdminEnv, loadEnvironment } from '@switchyard/config';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { createLogger } from '@switchyard/observability';
import { generateSecretKeySpec, hashPassword } from '@switchyard/security';
import { createService } from '@switchyard/service';
import { clearRedisNamespace, query, WAIT_TIMEOUT_MS, waitFor } from '@switchyard/testing';
import { Redis } from 'ioredis';
import request from 'supertest';
import { AdminModule } from '../admin.module.js';
import { adminDefinition } from '../admin.definition.js';

// A real admin service on a real port, against the run's Postgres database and a Redis
// namespace of its own (so sessions, throttles and events of one spec file never meet
// another's). It keeps every log line and every response body it sends, and hears every
// event published in its namespace.

export const PASSWORD = 'correct horse battery staple';
const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface HarnessOptions {
  /** Short, lowercase: names the Redis namespace and the administrators it creates. */
  name: string;
  env?: Record<string, string>;
  /** Another database than the run's (tests of first start). */
  databaseUrl?: string;
  /** Controllers added next to the app's (tests of the access guard). */
  extraControllers?: Type[];
}

export interface PublishedEvent {
  pattern: string;
  data: Record<string, unknown>;
}

export interface Session {
  id: number;
  username: string;
  token: string;
}

export interface RegisteredRoute {
  method: string;
  url: string;
}

export class AdminHarness {
  readonly logs: string[] = [];
  readonly responses: string[] = [];
  readonly events: PublishedEvent[] = [];
  readonly routes: RegisteredRoute[] = [];
  /** The client address the edge reports by default; unique per harness. */
  readonly clientIp = `198.51.100.${1 + Math.floor(Math.random() * 250)}`;
  app!: NestFastifyApplication;
  env!: AdminEnv;
  url!: string;
  private subscriber?: Redis;
  private admins = 0;

  private constructor(readonly options: HarnessOptions) {}

  static async start(options: HarnessOptions): Promise<AdminHarness> {
    const harness = new AdminHarness(options);
    await harness.boot();
    return harness;
  }

  get databaseUrl(): string {
    return this.env.DATABASE_URL;
  }

  private async boot(): Promise<void> {
    const base = process.env.REDIS_PREFIX ?? 't';
    this.env = loadEnvironment(AdminEnv, {
      ...process.env,
      SECRET_KEYS: generateSecretKeySpec('test1'),
      REDIS_PREFIX: `${base}-${this.options.name}`.slice(0, 32),
      ...(this.options.databaseUrl ? { DATABASE_URL: this.options.databaseUrl } : {}),
      ...this.options.env,
    });
    // The run's Redis, even when a test points the app at an unreachable one.
    this.subscriber = new Redis(TEST_REDIS_URL);
    this.subscriber.on('pmessage', (_pattern: string, _channel: string, message: string) => {
      const packet = JSON.parse(message) as PublishedEvent;
      this.events.push({ pattern: packet.pattern, data: packet.data });
    });
    await this.subscriber.psubscribe(`${this.env.REDIS_PREFIX}:*`);

    const logger = createLogger({
      service: 'admin',
      level: 'trace',
      destination: { write: (line: string) => void this.logs.push(line) },
    });
    this.app = await createService(
      {
        ...adminDefinition,
        module: (env) => {
          const extra = this.options.extraControllers ?? [];
          if (extra.length === 0) return AdminModule.forRoot(env);
          @Module({})
          class HarnessRoot {}
          return { module: HarnessRoot, imports: [AdminModule.forRoot(env)], controllers: extra };
        },
        configure: async (app, env, log) => {
          const fastify = app.getHttpAdapter().getInstance();
          fastify.addHook('onRoute', (route) => {
            for (const method of [route.method].flat())
              this.routes.push({ method, url: route.url });
          });
          fastify.addHook('onSend', async (_request, _reply, payload) => {
            if (typeof payload === 'string') this.responses.push(payload);
            else if (Buffer.isBuffer(payload)) this.responses.push(payload.toString('utf8'));
            return payload;
          });
          await adminDefinition.configure?.(app, env, log);
        },
      },
      this.env,
      logger,
    );
    await this.app.listen({ port: 0, host: '127.0.0.1' });
    this.url = (await this.app.getUrl()).replace('[::1]', '127.0.0.1');
  }

  async close(): Promise<void> {
    await this.app?.close();
    // A client that never connected is still retrying after the app's QUIT: stop it.
    this.app?.get<RedisClient>(REDIS).disconnect();
    await this.subscriber?.quit();
    await clearRedisNamespace(TEST_REDIS_URL, this.env.REDIS_PREFIX);
  }

  /** Requests as the edge forwards them: from loopback, with the client in X-Forwarded-For. */
  api(token?: string, clientIp: string = this.clientIp) {
    const agent = request(this.url);
    const prepare = (test: request.Test) => {
      void test.set('x-forwarded-for', clientIp);
      if (token) void test.set('authorization', `Bearer ${token}`);
      return test;
    };
    return {
      get: (path: string) => prepare(agent.get(path)),
      post: (path: string, body?: unknown) => prepare(agent.post(path)).send(body as object),
      put: (path: string, body?: unknown) => prepare(agent.put(path)).send(body as object),
      patch: (path: string, body?: unknown) => prepare(agent.patch(path)).send(body as object),
      delete: (path: string) => prepare(agent.delete(path)),
    };
  }

  /** Creates an administrator directly in the database. */
  async createAdmin(
    role: 'owner' | 'admin' | 'viewer' | 'member',
    options: { mustChangePassword?: boolean; password?: string; username?: string } = {},
  ): Promise<{ id: number; username: string; password: string }> {
    this.admins += 1;
    const username =
      options.username ?? `${this.options.name}-${role}-${this.admins}-${randomSuffix()}`;
    const password = options.password ?? PASSWORD;
    const [row] = await query<{ id: number }>(
      this.databaseUrl,
      `INSERT INTO "AdminUser" (username, "passwordHash", role, "mustChangePassword", "updatedAt")
       VALUES ($1, $2, $3, $4, now()) RETURNING id`,
      [username, await hashPassword(password), role, options.mustChangePassword ?? false],
    );
    if (!row) throw new Error('no administrator created');
    return { id: row.id, username, password };
  }

  async login(username: string, password: string = PASSWORD): Promise<string> {
    const response = await this.api().post('/api/auth/login', { username, password });
    if (response.status !== 200) {
      throw new Error(`login of ${username} failed: ${response.status} ${response.text}`);
    }
    return (response.body as { token: string }).token;
  }

  /** A new administrator of that role, logged in. */
  async session(role: 'owner' | 'admin' | 'viewer' | 'member'): Promise<Session> {
    const admin = await this.createAdmin(role);
    return { id: admin.id, username: admin.username, token: await this.login(admin.username) };
  }

  /** The first event on `name` whose payload matches, published at most `timeoutMs` from now. */
  async event(
    name: string,
    matches: (data: Record<string, unknown>) => boolean = () => true,
    timeoutMs = WAIT_TIMEOUT_MS,
  ): Promise<Record<string, unknown>> {
    return waitFor(() => this.events.find((e) => e.pattern === name && matches(e.data))?.data, {
      timeoutMs,
      what: `event ${name}`,
    });
  }

  eventsNamed(name: string): Record<string, unknown>[] {
    return this.events.filter((e) => e.pattern === name).map((e) => e.data);
  }

  /** Audit rows about one target, oldest first. */
  auditOf(targetType: string, targetId: number | string) {
    return query<{
      action: string;
      actorId: number | null;
      actorName: string;
      clientIp: string | null;
      details: Record<string, unknown> | null;
    }>(
      this.databaseUrl,
      `SELECT action, "actorId", "actorName", "clientIp", details FROM "AuditLog"
       WHERE "targetType" = $1 AND "targetId" = $2 ORDER BY id`,
      [targetType, String(targetId)],
    );
  }
}

export function randomSuffix(): string {
  return Math.random().toString(36).slice(2, 8);
}

/** A channel body with an upstream key that no log masking would hide. */
export function channelBody(overrides: Record<string, unknown> = {}) {
  return {
    name: `channel-${randomSuffix()}`,
    kind: 'single',
    baseUrl: 'https://upstream.example.com',
    keys: [`upstream-key-${randomSuffix()}${randomSuffix()}`],
    models: ['gpt-4o', 'gpt-4o-mini'],
    priority: 1,
    weight: 1,
    ...overrides,
  };
}
