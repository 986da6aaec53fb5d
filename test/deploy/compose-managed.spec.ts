import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { APP_ENVIRONMENTS, loadEnvironment, type BaseEnv } from '@switchyard/config';
import { suiteServices } from '@switchyard/launcher';
import { redisConnectionOptions } from '@switchyard/messaging';
import { deployDirectory } from './deploy-files.js';

// deploy/docker/compose.managed.yaml (and its Redis Cluster addition) against the apps'
// configuration classes: the suite without its own Postgres and Redis, pointed at a pooler,
// a replica and a Sentinel-watched or clustered Redis. No Docker engine runs here: the files
// are parsed, interpolated with an operator's values and merged as `docker compose -f a -f
// b` merges environments, and each app's variables are loaded as the app would load them.

interface ComposeService {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  read_only?: boolean;
}

interface ComposeFile {
  services: Record<string, ComposeService>;
}

const operatorValues: Record<string, string> = {
  DATABASE_URL: 'postgresql://switchyard:pw@pooler.example.internal:6432/switchyard?pgbouncer=true',
  DATABASE_DIRECT_URL: 'postgresql://switchyard:pw@primary.example.internal:5432/switchyard',
  DATABASE_READ_URL: 'postgresql://switchyard:pw@replica.example.internal:5432/switchyard',
  REDIS_URL: 'redis+sentinel://:pw@sentinel-1:26379,sentinel-2:26379,sentinel-3:26379/mymaster',
  SECRET_KEYS: `k1:${randomBytes(32).toString('base64')}`,
  ADMIN_PASSWORD: 'an admin password',
  CHAT_ADMIN_PASSWORD: 'a chat admin password',
};
const clusterValues: Record<string, string> = {
  ...operatorValues,
  REDIS_URL: 'rediss://:pw@cluster.example.internal',
  REDIS_CLUSTER_NODES: 'redis-1:6379,redis-2:6379,redis-3:6379',
};

function read(name: string): ComposeFile {
  return parse(readFileSync(path.join(deployDirectory, 'docker', name), 'utf8'), {
    merge: true,
  }) as ComposeFile;
}

const managed = read('compose.managed.yaml');
const cluster = read('compose.managed-cluster.yaml');
const oneHost = read('compose.yaml');
/** The apps a managed deployment runs: the launcher's, without the fake provider. */
const apps = suiteServices({ SECRET_KEYS: operatorValues.SECRET_KEYS }).filter(
  (service) => service.name !== 'mock-upstream',
);

/** Flagged for the suite's pools as reached through PgBouncer (docs/scaling.md, "PgBouncer"). */
function pooled(url: string): boolean {
  return new URL(url).searchParams.get('pgbouncer') === 'true';
}

/** `${NAME}`, `${NAME:-default}` and `${NAME:?message}`, as compose interpolates them. */
function interpolate(value: string, values: Record<string, string>): string {
  return value.replace(
    /\$\{(\w+)(?:(:?[-?])([^}]*))?\}/g,
    (_, name: string, operator?: string, fallback?: string) => {
      const replacement = values[name];
      if (replacement !== undefined) return replacement;
      if (operator?.endsWith('-')) return fallback ?? '';
      throw new Error(`compose reads \${${name}}, which the operator must set: ${fallback ?? ''}`);
    },
  );
}

function environmentOf(
  name: string,
  values: Record<string, string>,
  files: ComposeFile[],
): Record<string, string> {
  // Later files add to (and override) an earlier file's environment, key by key.
  const merged = Object.assign(
    {},
    ...files.map((file) => file.services[name]?.environment ?? {}),
  ) as Record<string, string>;
  return Object.fromEntries(
    Object.entries(merged).map(([key, value]) => [key, interpolate(String(value), values)]),
  );
}

it('runs the apps and the migrations, and no Postgres or Redis of its own', () => {
  expect(Object.keys(managed.services).sort()).toEqual(
    [...apps.map((service) => service.name), 'migrate'].sort(),
  );
  // The cluster file only adds to services the first one has.
  for (const name of Object.keys(cluster.services)) expect(managed.services[name]).toBeDefined();
});

describe.each(apps)('$name', (service) => {
  const schema: new () => BaseEnv = APP_ENVIRONMENTS[service.name];
  const readable = Object.keys(new schema());

  it('runs what the one-host compose file runs, read-only, on the same port', () => {
    const definition = managed.services[service.name]!;
    const same = oneHost.services[service.name]!;
    expect(definition.command).toEqual(same.command);
    expect(definition.ports).toEqual(same.ports);
    expect(definition.read_only).toBe(true);
  });

  it.each([
    ['Sentinel', operatorValues, [managed]],
    ['a Redis Cluster', clusterValues, [managed, cluster]],
  ] as const)(
    'on %s: sets only variables the app reads, with values it accepts',
    (_, values, files) => {
      const environment = environmentOf(service.name, values, [...files]);
      expect(Object.keys(environment).filter((name) => !readable.includes(name))).toEqual([]);
      expect(() => loadEnvironment(schema, environment)).not.toThrow();
    },
  );

  it('reaches Postgres through the pooler and Redis in the form chosen', () => {
    const sentinel = environmentOf(service.name, operatorValues, [managed]);
    if (!readable.includes('DATABASE_URL')) {
      expect(sentinel.DATABASE_URL).toBeUndefined();
      return;
    }
    expect(sentinel.DATABASE_URL).toBe(operatorValues.DATABASE_URL);
    expect(pooled(sentinel.DATABASE_URL!)).toBe(true);
    expect(redisConnectionOptions(sentinel.REDIS_URL!, sentinel).mode).toBe('sentinel');
    const clustered = environmentOf(service.name, clusterValues, [managed, cluster]);
    expect(redisConnectionOptions(clustered.REDIS_URL!, clustered).mode).toBe('cluster');
  });

  it('waits for the migrations when it uses the database', () => {
    if (!readable.includes('DATABASE_URL')) return;
    expect(managed.services[service.name]!.depends_on).toMatchObject({
      migrate: { condition: 'service_completed_successfully' },
    });
  });
});

it('reads the admin’s reports from the replica', () => {
  const admin = environmentOf('admin', operatorValues, [managed]);
  expect(admin.DATABASE_READ_URL).toBe(operatorValues.DATABASE_READ_URL);
});

it('runs the migrations on a direct connection to the primary, never through the pooler', () => {
  const migrate = managed.services.migrate!;
  expect(migrate.command).toEqual(oneHost.services.migrate!.command);
  expect(migrate.depends_on).toEqual({});
  const environment = environmentOf('migrate', operatorValues, [managed]);
  expect(Object.keys(environment)).toEqual(['DATABASE_URL']);
  expect(environment.DATABASE_URL).toBe(operatorValues.DATABASE_DIRECT_URL);
  expect(pooled(environment.DATABASE_URL!)).toBe(false);
});

it('stops at once when the operator has not said where Postgres or Redis is', () => {
  for (const missing of ['DATABASE_URL', 'DATABASE_DIRECT_URL', 'REDIS_URL']) {
    const values = { ...operatorValues };
    delete values[missing];
    const names = ['metering', 'migrate'];
    expect(() => names.forEach((name) => environmentOf(name, values, [managed]))).toThrow(missing);
  }
  const { REDIS_CLUSTER_NODES: _, ...withoutNodes } = clusterValues;
  expect(() => environmentOf('edge', withoutNodes, [managed, cluster])).toThrow(
    'REDIS_CLUSTER_NODES',
  );
});
