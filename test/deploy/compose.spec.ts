import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { APP_ENVIRONMENTS, loadEnvironment, type BaseEnv } from '@switchyard/config';
import { suiteServices } from '@switchyard/launcher';
import { deployDirectory } from './deploy-files.js';

// deploy/docker/compose.yaml against the launcher (`pnpm start`): the same services on the
// same ports, each app with only the variables it reads and values it accepts, Postgres and
// Redis with health checks and volumes, and the migrations run once before any app.

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
  read_only?: boolean;
  restart?: string;
}

/** Values for the variables compose.yaml takes from the operator (`${NAME:?message}`). */
const operatorValues: Record<string, string> = {
  POSTGRES_PASSWORD: 'compose-test-password',
  SECRET_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  ADMIN_PASSWORD: 'an admin password',
  CHAT_ADMIN_PASSWORD: 'a chat admin password',
};

const composeFile = path.join(deployDirectory, 'docker', 'compose.yaml');
const compose = parse(readFileSync(composeFile, 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
};
const launcherServices = suiteServices({ SECRET_KEYS: operatorValues.SECRET_KEYS });
const BACKING = ['postgres', 'redis', 'migrate'];

function interpolate(value: string): string {
  return value.replace(/\$\{(\w+)(?::?[-?][^}]*)?\}/g, (_, name: string) => {
    const replacement = operatorValues[name];
    if (replacement === undefined) throw new Error(`compose.yaml reads \${${name}}, unknown here`);
    return replacement;
  });
}

function environmentOf(name: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(compose.services[name]!.environment ?? {}).map(([key, value]) => [
      key,
      interpolate(String(value)),
    ]),
  );
}

it('runs the launcher’s services, and besides them only Postgres, Redis and the migrations', () => {
  expect(Object.keys(compose.services).sort()).toEqual(
    [...launcherServices.map((service) => service.name), ...BACKING].sort(),
  );
});

describe.each(launcherServices)('$name', (service) => {
  const definition = compose.services[service.name]!;

  it('runs the app’s entry point with the launcher’s V8 flags, from the one image', () => {
    expect(definition.image).toBe(compose.services.migrate!.image);
    expect(definition.command).toEqual([
      'node',
      ...(service.nodeFlags ?? []),
      `apps/${service.name}/dist/main.js`,
    ]);
  });

  it('publishes the launcher’s port on the loopback only, and checks /healthz on it', () => {
    expect(definition.ports).toEqual([`127.0.0.1:${service.port}:${service.port}`]);
    expect(definition.healthcheck?.test.join(' ')).toContain(
      `http://127.0.0.1:${service.port}/healthz`,
    );
  });

  it('sets only variables the app reads, with values it accepts', () => {
    const schema: new () => BaseEnv = APP_ENVIRONMENTS[service.name];
    const environment = environmentOf(service.name);
    const readable = Object.keys(new schema());
    expect(Object.keys(environment).filter((name) => !readable.includes(name))).toEqual([]);
    expect(() => loadEnvironment(schema, environment)).not.toThrow();
    // Every app listens on the default port the launcher uses: no port variable overrides it.
    expect(environment[service.portVariable]).toBeUndefined();
  });

  it('points the URLs between apps at the compose service and port of the app they name', () => {
    for (const [name, value] of Object.entries(environmentOf(service.name))) {
      const target = launcherServices.find((other) => name === `${other.name.toUpperCase()}_URL`);
      if (target) expect(value).toBe(`http://${target.name}:${target.port}`);
    }
  });

  it('waits for the migrations and Redis when it uses the database', () => {
    const uses = Object.keys(environmentOf(service.name));
    if (!uses.includes('DATABASE_URL')) return;
    expect(definition.depends_on).toMatchObject({
      migrate: { condition: 'service_completed_successfully' },
      redis: { condition: 'service_healthy' },
    });
  });

  it('runs with a read-only root filesystem', () => {
    expect(definition.read_only).toBe(true);
  });
});

it('points every DATABASE_URL and REDIS_URL at the compose Postgres and Redis', () => {
  const postgres = compose.services.postgres!.environment!;
  for (const name of Object.keys(compose.services).filter((name) => name !== 'postgres')) {
    const environment = environmentOf(name);
    if (environment.DATABASE_URL) {
      const url = new URL(environment.DATABASE_URL);
      expect([url.hostname, url.port, url.username, url.pathname]).toEqual([
        'postgres',
        '5432',
        postgres.POSTGRES_USER,
        `/${postgres.POSTGRES_DB}`,
      ]);
      expect(url.password).toBe(operatorValues.POSTGRES_PASSWORD);
    }
    if (environment.REDIS_URL) expect(environment.REDIS_URL).toBe('redis://redis:6379');
  }
});

it('runs the migrations once, after Postgres is healthy, before any app', () => {
  const migrate = compose.services.migrate!;
  expect(migrate.command).toEqual(['node', 'libs/db/dist/migrate/cli.js']);
  expect(migrate.restart).toBe('no');
  expect(migrate.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
  expect(Object.keys(environmentOf('migrate'))).toEqual(['DATABASE_URL']);
});

it('keeps Postgres’s, Redis’s and the edge spool’s data in named volumes, and checks their health', () => {
  const volume = (name: string) => compose.services[name]!.volumes?.[0]?.split(':')[0];
  expect(Object.keys(compose.volumes).sort()).toEqual(
    [volume('postgres'), volume('redis'), volume('edge')].sort(),
  );
  expect(compose.services.postgres!.healthcheck?.test).toContain('pg_isready');
  expect(compose.services.redis!.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
  // BullMQ must never lose a queued job to eviction.
  expect(compose.services.redis!.command?.join(' ')).toContain('--maxmemory-policy noeviction');
});
