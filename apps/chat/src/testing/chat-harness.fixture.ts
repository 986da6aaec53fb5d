import { type NestFastifyApplication } from '@nestjs/platform-fastify';
import { ChatEnv, loadEnvironment } from '@switchyard/config';
import { createLogger, Registry } from '@switchyard/observability';
import { generateSecretKeySpec } from '@switchyard/security';
import { createService } from '@switchyard/service';
import { clearRedisNamespace, query, startApp, type AppProcess } from '@switchyard/testing';
import request from 'supertest';
import { chatDefinition } from '../chat.definition.js';

// The chat service as the web app sees it: the real app on a real port, over the run's
// own Postgres database and Redis namespace, with a real mock-upstream process behind it.

export const ADMIN = { username: 'root', password: 'root-password-1' };

/** One sealing key for the run, as one installation has: every instance opens every record. */
export const SECRET_KEYS = generateSecretKeySpec('test');

export interface ChatHarness {
  app: NestFastifyApplication;
  url: string;
  env: ChatEnv;
  api: ReturnType<typeof request>;
  close(): Promise<void>;
}

/** Forgets every chat row and key of this run, so each spec file starts from nothing. */
export async function resetChatData(): Promise<void> {
  await query(
    process.env.DATABASE_URL!,
    'TRUNCATE "Message", "Conversation", "ChatUser", "ChatModel", "ApiKeyRecord", "McpServer", "A2aAgent", "License", "Setting", "CreditCodeBatch", "CreditPlan" RESTART IDENTITY CASCADE',
  );
  await clearRedisNamespace(process.env.REDIS_URL!, process.env.REDIS_PREFIX!);
}

export async function startChat(overrides: Record<string, string> = {}): Promise<ChatHarness> {
  const env = loadEnvironment(ChatEnv, {
    ...process.env,
    SECRET_KEYS,
    CHAT_ADMIN_USERNAME: ADMIN.username,
    CHAT_ADMIN_PASSWORD: ADMIN.password,
    CHAT_UPSTREAM_TIMEOUT_MS: '1500',
    ...overrides,
  });
  const app = await createService(
    chatDefinition,
    env,
    createLogger({ service: 'chat', level: 'silent' }),
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  return { app, url, env, api: request(url), close: () => app.close() };
}

export async function login(
  api: ChatHarness['api'],
  username: string,
  password: string,
): Promise<string> {
  const response = await api.post('/api/auth/login').send({ username, password });
  if (response.status !== 200) {
    throw new Error(
      `login of ${username} failed: ${response.status} ${JSON.stringify(response.body)}`,
    );
  }
  return (response.body as { token: string }).token;
}

let users = 0;

/** Registers a user with a fresh name and signs them in. */
export async function newUser(
  api: ChatHarness['api'],
  name = 'user',
): Promise<{ id: number; username: string; token: string }> {
  users += 1;
  const username = `${name}-${users}-${Date.now().toString(36)}`;
  const password = 'a-good-password';
  const registered = await api.post('/api/auth/register').send({ username, password });
  if (registered.status !== 201) {
    throw new Error(`register failed: ${registered.status} ${JSON.stringify(registered.body)}`);
  }
  return {
    id: (registered.body as { id: number }).id,
    username,
    token: await login(api, username, password),
  };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/**
 * A sample of the app's metrics as a scrape of `/metrics` reads it (the registry's text):
 * the sum of the series of `name` whose labels include `labels`.
 */
export async function scrapedValue(
  chat: ChatHarness,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const text = await chat.app.get(Registry).metrics();
  let sum = 0;
  for (const match of text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/gm)) {
    if (match[1] !== name) continue;
    const seen = new Map(
      [...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!] as const),
    );
    if (Object.entries(labels).every(([key, value]) => seen.get(key) === value)) {
      sum += Number(match[3]);
    }
  }
  return sum;
}

export interface ReplyEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Parses a text/event-stream body into its named events (comments dropped). */
export function parseEvents(text: string): ReplyEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '' && !block.startsWith(':'))
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice(7) ?? 'message';
      const data = lines
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

/** Sends a message and reads the whole reply stream (or the JSON error before it). */
export async function sendMessage(
  harness: ChatHarness,
  token: string,
  conversationId: string,
  body: { content: string; model?: string; attachmentIds?: string[] },
): Promise<{ status: number; contentType: string; events: ReplyEvent[]; json: unknown }> {
  const response = await fetch(`${harness.url}/api/conversations/${conversationId}/messages`, {
    method: 'POST',
    headers: { ...bearer(token), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const contentType = response.headers.get('content-type') ?? '';
  const text = await response.text();
  return contentType.startsWith('text/event-stream')
    ? { status: response.status, contentType, events: parseEvents(text), json: null }
    : { status: response.status, contentType, events: [], json: JSON.parse(text) as unknown };
}

// ── the mock upstream ──

export interface MockUpstream {
  url: string;
  process: AppProcess;
  /** Scripts a fault for the next `times` requests with `key` (see mock-upstream's FaultDto). */
  fault(key: string, fault: Record<string, unknown>, times?: number): Promise<void>;
  /** Requests each account received so far. */
  requests(): Promise<Record<string, number>>;
  /** The bodies of the last requests `key` received, oldest first. */
  received(key: string): Promise<unknown[]>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

export async function startMockUpstream(keys: string[]): Promise<MockUpstream> {
  const child = await startApp('mock-upstream', {
    env: { MOCK_ACCOUNTS: keys.join(','), LOG_LEVEL: 'warn' },
  });
  const control = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${child.url}/_mock/${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok)
      throw new Error(`mock ${method} ${path}: ${response.status} ${await response.text()}`);
    return response;
  };
  return {
    url: child.url,
    process: child,
    fault: async (key, fault, times) => {
      await control('POST', 'faults', { key, ...fault, ...(times ? { times } : {}) });
    },
    requests: async () => {
      const stats = (await (await control('GET', 'accounts')).json()) as {
        key: string;
        requests: number;
      }[];
      return Object.fromEntries(stats.map((s) => [s.key, s.requests]));
    },
    received: async (key) => {
      const path = `accounts/${encodeURIComponent(key)}/requests`;
      const log = (await (await control('GET', path)).json()) as { body: unknown }[];
      return log.map((entry) => entry.body);
    },
    reset: async () => {
      await control('POST', 'reset');
    },
    stop: async () => {
      await child.stop();
    },
  };
}
