import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  clearRedisNamespace,
  dropTestDatabase,
  freePort,
  query,
  repositoryRoot,
  testRedisPrefix,
  WaitAborted,
  waitFor,
} from '@switchyard/testing';

// The README's quick start, `pnpm start`, on a database that does not exist yet: the
// launcher must create and migrate it, start every service, seed the administrators and the
// demo channel, wire the chat app to the gateway, so that a user who just registered can
// chat, and stop everything on Ctrl-C.

const PORTS = {
  'mock-upstream': 'MOCK_UPSTREAM_PORT',
  admin: 'ADMIN_PORT',
  router: 'ROUTER_OPS_PORT',
  metering: 'METERING_OPS_PORT',
  edge: 'EDGE_PORT',
  chat: 'CHAT_PORT',
  web: 'WEB_PORT',
} as const;
type Service = keyof typeof PORTS;
const OPS_PORTS = ['EDGE_OPS_PORT', 'ADMIN_OPS_PORT', 'CHAT_OPS_PORT', 'WEB_OPS_PORT'];

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const serverUrl = new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/x');
const databaseName = `sy_launch_${Date.now().toString(36)}`;
const databaseUrl = Object.assign(new URL(serverUrl), { pathname: `/${databaseName}` }).toString();
const redisPrefix = testRedisPrefix();
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-launch-'));

const ports = {} as Record<Service, number>;
let launcher: ChildProcess;
let output = '';

function url(service: Service, route: string): string {
  return `http://127.0.0.1:${ports[service]}${route}`;
}

async function post(address: string, body: unknown, token?: string): Promise<Response> {
  return fetch(address, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
}

async function waitForOutput(text: string, timeoutMs: number): Promise<void> {
  await waitFor(
    () => {
      if (launcher.exitCode !== null) throw new WaitAborted(`launcher exited early:\n${output}`);
      return output.includes(text);
    },
    { timeoutMs, intervalMs: 100, what: () => `"${text}" in the launcher's output:\n${output}` },
  );
}

beforeAll(async () => {
  for (const service of Object.keys(PORTS) as Service[]) ports[service] = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: redisPrefix,
    LOCAL_STATE_DIR: stateDir,
    ADMIN_URL: `http://127.0.0.1:${ports.admin}`,
    CHAT_URL: `http://127.0.0.1:${ports.chat}`,
    ...Object.fromEntries(
      (Object.entries(PORTS) as [Service, string][]).map(([service, name]) => [
        name,
        String(ports[service]),
      ]),
    ),
    // The operations ports too, so this run never meets another suite on their defaults.
    ...Object.fromEntries(
      await Promise.all(OPS_PORTS.map(async (name) => [name, String(await freePort())] as const)),
    ),
  };
  // Generated and printed by the launcher, as on a fresh machine.
  for (const name of [
    'ADMIN_USERNAME',
    'ADMIN_PASSWORD',
    'CHAT_ADMIN_USERNAME',
    'CHAT_ADMIN_PASSWORD',
  ])
    delete env[name];
  launcher = spawn(process.execPath, [path.join(repositoryRoot, 'deploy/local/dist/start.js')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  launcher.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  launcher.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // Generous: seven Node processes and the CLIs start slowly on a busy machine.
  await waitForOutput('Press Ctrl-C to stop everything.', 540_000);
}, 560_000);

afterAll(async () => {
  if (launcher.exitCode === null) {
    launcher.kill('SIGINT');
    await once(launcher, 'exit');
  }
  await dropTestDatabase(serverUrl.toString(), databaseName);
  await clearRedisNamespace(redisUrl, redisPrefix);
  rmSync(stateDir, { recursive: true, force: true });
}, 60_000);

it('creates and migrates the database, and says where every service listens', () => {
  expect(output).toContain(`created database ${databaseName}`);
  expect(output).toMatch(/applied \d+ migration\(s\)/);
  for (const service of Object.keys(PORTS) as Service[]) {
    expect(output).toMatch(new RegExp(`${service}\\s+http://127\\.0\\.0\\.1:${ports[service]}\\b`));
  }
});

it('keeps the generated secrets in a file only its owner can read', () => {
  const secrets = path.join(stateDir, 'local/secrets.env');
  expect(statSync(secrets).mode & 0o777).toBe(0o600);
  const names = readFileSync(secrets, 'utf8')
    .split('\n')
    .filter((line) => line.includes('='))
    .map((line) => line.slice(0, line.indexOf('=')));
  expect(names).toEqual(
    expect.arrayContaining(['SECRET_KEYS', 'ADMIN_PASSWORD', 'CHAT_ADMIN_PASSWORD']),
  );
});

it('creates the first gateway administrator, who must change the printed password', async () => {
  const [, username, password] = /Gateway administrator: (\S+) \/ (\S+)/.exec(output) ?? [];
  expect(password).toBeDefined();
  const login = await post(url('edge', '/api/auth/login'), { username, password });
  expect(login.status).toBe(200);
  expect(await login.json()).toMatchObject({ mustChangePassword: true });
});

it('lets a user who just registered chat through the gateway and the demo channel', async () => {
  const credentials = { username: 'first-user', password: 'a long enough password' };
  expect((await post(url('web', '/api/auth/register'), credentials)).status).toBe(201);
  const { token } = (await (await post(url('web', '/api/auth/login'), credentials)).json()) as {
    token: string;
  };

  const models = (
    (await (
      await fetch(url('web', '/api/models'), { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { items: { name: string }[] }
  ).items;
  expect(models.map((model) => model.name)).toEqual(
    expect.arrayContaining(['gpt-4o-mini', 'dall-e-3']),
  );

  const conversation = (await (
    await post(url('web', '/api/conversations'), { title: 'hello', model: 'gpt-4o-mini' }, token)
  ).json()) as { id: string };
  const reply = await post(
    url('web', `/api/conversations/${conversation.id}/messages`),
    { content: 'ping from the quick start' },
    token,
  );
  expect(reply.status).toBe(200);
  const events = await reply.text();
  expect(events).toContain('event: delta');
  expect(events).toContain('event: done');
  expect(events).not.toContain('event: error');

  // It went through the edge with the chat app's own gateway token, and was metered.
  const [usage] = await waitFor(async () => {
    const rows = await query<{ token: string; model: string; status: number }>(
      databaseUrl,
      `SELECT t.name AS token, u.model, u.status FROM "UsageLog" u JOIN "Token" t ON t.id = u."tokenId"`,
    );
    return rows.length > 0 ? rows : undefined;
  });
  expect(usage).toEqual({ token: 'Chat app (local)', model: 'gpt-4o-mini', status: 200 });
});

it('stops every service on Ctrl-C', async () => {
  launcher.kill('SIGINT');
  const [code] = (await once(launcher, 'exit')) as [number | null];
  expect(code).toBe(0);
  for (const service of Object.keys(PORTS) as Service[]) {
    await expect(fetch(url(service, '/healthz'))).rejects.toThrow();
  }
}, 60_000);
