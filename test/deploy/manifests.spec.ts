import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { APP_START_TIMEOUT_MS, WaitAborted, waitFor } from '@switchyard/testing';
import {
  APP_ENVIRONMENTS,
  StoreEnv,
  knownEnvironmentVariables,
  loadEnvironment,
  type AppName,
  type BaseEnv,
} from '@switchyard/config';
import {
  dockerfilePath,
  flattenNginx,
  isKind,
  kustomizeBase,
  nginxConfigPath,
  parseDockerfile,
  parseNginx,
  parseQuantity,
  readKustomizeBase,
  repositoryRoot,
  resolvePort,
  type ConfigMap,
  type Container,
  type Deployment,
  type HorizontalPodAutoscaler,
  type Job,
  type Kustomization,
  type PodSpec,
  type Secret,
  type Service,
} from './deploy-files.js';

// The deployment files against the code they deploy: the Kubernetes base against the apps'
// environment classes (libs/config), the Dockerfile against the manifests, and the nginx
// reverse proxy against docs/specification.md ("Reverse proxy"), checked by nginx itself.

// The fake provider is not in the base, which holds only what production runs: it is in
// overlays/local (kubernetes.spec.ts checks the overlays).
const APPS = (Object.keys(APP_ENVIRONMENTS) as AppName[]).filter((app) => app !== 'mock-upstream');
const ENVIRONMENTS: Record<AppName, new () => BaseEnv> = APP_ENVIRONMENTS;
const KNOWN = knownEnvironmentVariables();

const manifests = readKustomizeBase();
const objects = manifests.flatMap((manifest) => manifest.documents);
const deployments = objects.filter(isKind<Deployment>('Deployment'));
const services = objects.filter(isKind<Service>('Service'));
const jobs = objects.filter(isKind<Job>('Job'));
const autoscalers = objects.filter(isKind<HorizontalPodAutoscaler>('HorizontalPodAutoscaler'));
const configMaps = objects.filter(isKind<ConfigMap>('ConfigMap'));
const secretTemplates = objects.filter(isKind<Secret>('Secret'));
const kustomization = parseYaml(
  readFileSync(path.join(kustomizeBase, 'kustomization.yaml'), 'utf8'),
) as Kustomization;

const SECRET_TEMPLATE_FILE = 'secret.example.yaml';
const PLACEHOLDER = 'REPLACE_ME';

/** Valid stand-ins for the Secret's placeholders, to validate the rest of the settings. */
const SECRET_STAND_INS: Record<string, string> = {
  DATABASE_URL: 'postgresql://switchyard:secret@postgres:5432/switchyard',
  REDIS_URL: 'redis://:secret@redis:6379',
  SECRET_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
  ADMIN_PASSWORD: 'a long enough password',
  CHAT_ADMIN_PASSWORD: 'a long enough password',
};

function only<T>(items: T[], what: string): T {
  if (items.length !== 1) throw new Error(`expected exactly one ${what}, found ${items.length}`);
  return items[0] as T;
}

const configMap = only(configMaps, 'ConfigMap in the base');
const secretTemplate = only(secretTemplates, `Secret (the template ${SECRET_TEMPLATE_FILE})`);
const secretKeys = { ...secretTemplate.data, ...secretTemplate.stringData };

/** The app a container runs, from its command: `node [--v8-flag ...] apps/<app>/dist/main.js`. */
function appOf(container: Container): AppName | undefined {
  const line = [...(container.command ?? []), ...(container.args ?? [])].join(' ');
  const match = /^node (?:--[a-z-]+=\S+ )*apps\/([a-z-]+)\/dist\/main\.js$/.exec(line);
  return match && (APPS as string[]).includes(match[1] ?? '') ? (match[1] as AppName) : undefined;
}

function appContainer(deployment: Deployment): { app: AppName; container: Container } {
  const containers = deployment.spec.template.spec.containers;
  const found = containers.flatMap((container) => {
    const app = appOf(container);
    return app ? [{ app, container }] : [];
  });
  return only(found, `container running an app in Deployment ${deployment.metadata.name}`);
}

function deploymentOf(app: AppName): Deployment {
  return only(
    deployments.filter((deployment) => appContainer(deployment).app === app),
    `Deployment of ${app}`,
  );
}

interface EnvSetting {
  name: string;
  source: 'literal' | 'configMap' | 'secret';
  key: string;
  optional: boolean;
}

/** Every variable a container sets: literally, by key reference, or a whole ConfigMap/Secret. */
function settingsOf(container: Container): EnvSetting[] {
  const settings: EnvSetting[] = [];
  for (const source of container.envFrom ?? []) {
    const prefix = source.prefix ?? '';
    if (source.configMapRef) {
      expect(source.configMapRef.name).toBe(configMap.metadata.name);
      for (const key of Object.keys(configMap.data ?? {}))
        settings.push({ name: prefix + key, source: 'configMap', key, optional: false });
    }
    if (source.secretRef) {
      expect(source.secretRef.name).toBe(secretTemplate.metadata.name);
      for (const key of Object.keys(secretKeys))
        settings.push({ name: prefix + key, source: 'secret', key, optional: false });
    }
  }
  for (const variable of container.env ?? []) {
    const configRef = variable.valueFrom?.configMapKeyRef;
    const secretRef = variable.valueFrom?.secretKeyRef;
    if (configRef) {
      expect(configRef.name).toBe(configMap.metadata.name);
      settings.push({
        name: variable.name,
        source: 'configMap',
        key: configRef.key,
        optional: configRef.optional === true,
      });
    } else if (secretRef) {
      expect(secretRef.name).toBe(secretTemplate.metadata.name);
      settings.push({
        name: variable.name,
        source: 'secret',
        key: secretRef.key,
        optional: secretRef.optional === true,
      });
    } else {
      if (variable.value === undefined) throw new Error(`${variable.name} has no value`);
      settings.push({
        name: variable.name,
        source: 'literal',
        key: variable.value,
        optional: false,
      });
    }
  }
  return settings;
}

/** The environment a container starts with (Secret placeholders replaced by stand-ins). */
function environmentOf(container: Container): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const setting of settingsOf(container)) {
    let value: string | undefined;
    if (setting.source === 'literal') value = setting.key;
    if (setting.source === 'configMap') value = configMap.data?.[setting.key];
    if (setting.source === 'secret') {
      value = secretKeys[setting.key];
      if (value?.includes(PLACEHOLDER)) value = SECRET_STAND_INS[setting.key];
      if (value === undefined) throw new Error(`no stand-in for the Secret's ${setting.key}`);
    }
    if (value !== undefined) environment[setting.name] = value;
  }
  return environment;
}

/** The one `*_PORT` variable of an app's environment class that is not its `*_OPS_PORT`. */
function portVariableOf(app: AppName): string {
  const names = Object.keys(new ENVIRONMENTS[app]()).filter((name) => name.endsWith('_PORT'));
  const main = names.filter((name) => !name.endsWith('_OPS_PORT'));
  // Router and metering have one port, which is an operations port.
  return only(main.length > 0 ? main : names, `*_PORT variable in the environment class of ${app}`);
}

/** The variable of the port an app serves /metrics on: its `*_OPS_PORT`. */
function opsPortVariableOf(app: AppName): string {
  const names = Object.keys(new ENVIRONMENTS[app]()).filter((name) => name.endsWith('_OPS_PORT'));
  return only(names, `*_OPS_PORT variable in the environment class of ${app}`);
}

/**
 * The port the app listens on once deployed: what the manifests set for its port variable
 * (or the one given), else the default of its environment class.
 */
function listeningPort(app: AppName, variable = portVariableOf(app)): number {
  const set = environmentOf(appContainer(deploymentOf(app)).container)[variable];
  const defaults = new ENVIRONMENTS[app]() as object as Record<string, unknown>;
  const port = set !== undefined ? Number(set) : defaults[variable];
  if (typeof port !== 'number' || !Number.isInteger(port)) {
    throw new Error(`${app}: ${variable} has no integer value`);
  }
  return port;
}

function workloads(): { name: string; pod: PodSpec }[] {
  return [
    ...deployments.map((d) => ({
      name: `Deployment ${d.metadata.name}`,
      pod: d.spec.template.spec,
    })),
    ...jobs.map((j) => ({ name: `Job ${j.metadata.name}`, pod: j.spec.template.spec })),
  ];
}

function runtimeUser(): string {
  const dockerfile = parseDockerfile(readFileSync(dockerfilePath, 'utf8'));
  const runtime = dockerfile.stages.at(-1);
  const users = runtime?.instructions.filter((instruction) => instruction.keyword === 'USER') ?? [];
  const user = users.at(-1)?.args;
  if (!user) throw new Error('the runtime stage of the Dockerfile sets no USER');
  return user;
}

describe('Kubernetes base (deploy/k8s/base)', () => {
  it('parses: every file, every document, with a kind and a name', () => {
    expect(manifests.length).toBeGreaterThan(1);
    for (const manifest of manifests) {
      expect({ file: manifest.file, problems: manifest.problems }).toEqual({
        file: manifest.file,
        problems: [],
      });
      expect(manifest.documents.length).toBeGreaterThan(0);
      for (const document of manifest.documents) {
        expect(typeof document.apiVersion).toBe('string');
        expect(typeof document.kind).toBe('string');
        if (document.kind !== 'Kustomization')
          expect(document.metadata.name).toMatch(/^[a-z0-9-]+$/);
      }
    }
  });

  it('lists every manifest in kustomization.yaml, and the Secret template in none', () => {
    const files = manifests
      .map((manifest) => manifest.file)
      .filter((file) => file !== 'kustomization.yaml' && file !== SECRET_TEMPLATE_FILE);
    expect([...(kustomization.resources ?? [])].sort()).toEqual(files.sort());
    expect(manifests.map((manifest) => manifest.file)).toContain(SECRET_TEMPLATE_FILE);
    expect(kustomization.resources).not.toContain(SECRET_TEMPLATE_FILE);
  });

  it('gives every app one Deployment, named after it, running its entry point', () => {
    expect(deployments.map((deployment) => appContainer(deployment).app).sort()).toEqual(
      [...APPS].sort(),
    );
    for (const app of APPS) {
      const deployment = deploymentOf(app);
      expect(deployment.metadata.name).toBe(app);
      expect(deployment.spec.template.metadata.labels?.['app.kubernetes.io/name']).toBe(app);
      expect(existsSync(path.join(repositoryRoot, 'apps', app, 'src', 'main.ts'))).toBe(true);
    }
  });

  it('sets only variables that libs/config knows and that the app of the Deployment reads', () => {
    const misplaced: string[] = [];
    for (const deployment of deployments) {
      const { app, container } = appContainer(deployment);
      const names = settingsOf(container).map((setting) => setting.name);
      expect(new Set(names).size).toBe(names.length);
      for (const name of names) {
        if (!(KNOWN.get(name) ?? []).includes(app)) {
          misplaced.push(`${app}: ${name} (read by ${KNOWN.get(name)?.join(', ') ?? 'no app'})`);
        }
      }
    }
    expect(misplaced).toEqual([]);
  });

  it('references only ConfigMap and Secret keys that exist, and leaves none unused', () => {
    const settings = [...deployments, ...jobs].flatMap((workload) =>
      workload.spec.template.spec.containers.flatMap(settingsOf),
    );
    for (const setting of settings) {
      if (setting.optional) continue;
      if (setting.source === 'configMap')
        expect(Object.keys(configMap.data ?? {})).toContain(setting.key);
      if (setting.source === 'secret') expect(Object.keys(secretKeys)).toContain(setting.key);
    }
    const used = (source: EnvSetting['source']) =>
      new Set(settings.filter((s) => s.source === source).map((s) => s.key));
    expect(Object.keys(configMap.data ?? {}).filter((key) => !used('configMap').has(key))).toEqual(
      [],
    );
    expect(Object.keys(secretKeys).filter((key) => !used('secret').has(key))).toEqual([]);
    // Keys carry the name of the variable they fill, so an operator can tell what each does.
    for (const setting of settings.filter((s) => s.source !== 'literal')) {
      expect(setting.key).toBe(setting.name);
    }
  });

  it('keeps real credentials out of the Secret template', () => {
    for (const key of Object.keys(secretKeys)) {
      if (/PASSWORD|SECRET|_URL$/.test(key)) expect(secretKeys[key]).toContain(PLACEHOLDER);
    }
  });

  it("sets values each app's environment class accepts", () => {
    for (const app of APPS) {
      const { container } = appContainer(deploymentOf(app));
      expect(() => loadEnvironment(ENVIRONMENTS[app], environmentOf(container))).not.toThrow();
    }
  });

  it("exposes each app's listening and operations ports, probes /healthz and /readyz on the first, and scrapes /metrics on the second", () => {
    for (const app of APPS) {
      const port = listeningPort(app);
      const opsPort = listeningPort(app, opsPortVariableOf(app));
      const deployment = deploymentOf(app);
      const { container } = appContainer(deployment);
      expect({ app, ports: container.ports?.map((p) => p.containerPort) }).toEqual({
        app,
        ports: opsPort === port ? [port] : [port, opsPort],
      });
      if (opsPort !== port) expect(resolvePort(container, 'ops')).toBe(opsPort);
      expect(container.livenessProbe?.httpGet?.path).toBe('/healthz');
      expect(container.readinessProbe?.httpGet?.path).toBe('/readyz');
      for (const probe of [container.livenessProbe, container.readinessProbe]) {
        expect(resolvePort(container, probe?.httpGet?.port)).toBe(port);
      }
      if (container.startupProbe) {
        expect(container.startupProbe.httpGet?.path).toBe('/healthz');
        expect(resolvePort(container, container.startupProbe.httpGet?.port)).toBe(port);
      }
      expect(deployment.spec.template.metadata.annotations).toMatchObject({
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': String(opsPort),
        'prometheus.io/path': '/metrics',
      });
    }
  });

  it('gives every app a Service that selects its pods and targets its port', () => {
    expect(services.map((service) => service.metadata.name).sort()).toEqual([...APPS].sort());
    for (const app of APPS) {
      const service = only(
        services.filter((candidate) => candidate.metadata.name === app),
        `Service ${app}`,
      );
      const deployment = deploymentOf(app);
      const { container } = appContainer(deployment);
      expect(deployment.spec.template.metadata.labels).toMatchObject(service.spec.selector);
      expect(deployment.spec.template.metadata.labels).toMatchObject(
        deployment.spec.selector.matchLabels,
      );
      // No other Deployment's pods fall under this Service.
      for (const other of deployments.filter((d) => d !== deployment)) {
        expect(other.spec.template.metadata.labels).not.toMatchObject(service.spec.selector);
      }
      const port = only(
        service.spec.ports.filter((candidate) => candidate.name === 'http'),
        `port http of Service ${app}`,
      );
      expect(resolvePort(container, port.targetPort ?? port.port)).toBe(listeningPort(app));
      expect(port.port).toBe(listeningPort(app));
      const opsPort = listeningPort(app, opsPortVariableOf(app));
      // The operations port, when it is another, has its own Service port for the scraper.
      const others = service.spec.ports.filter((candidate) => candidate.name !== 'http');
      expect(others.map((p) => [p.name, p.port])).toEqual(
        opsPort === port.port ? [] : [['ops', opsPort]],
      );
    }
  });

  it('points the URLs between apps at the Service and port of the app they name', () => {
    const urls = Object.entries(configMap.data ?? {}).filter(([, value]) =>
      /^https?:\/\//.test(value),
    );
    expect(urls.map(([key]) => key).sort()).toEqual(['ADMIN_URL', 'CHAT_URL']);
    for (const [, value] of urls) {
      const url = new URL(value);
      const app = url.hostname as AppName;
      expect(APPS).toContain(app);
      expect(Number(url.port)).toBe(listeningPort(app));
    }
  });

  it('waits out SHUTDOWN_GRACE_MS and the preStop sleep before killing a pod', () => {
    for (const app of APPS) {
      const deployment = deploymentOf(app);
      const { container } = appContainer(deployment);
      const env = loadEnvironment(ENVIRONMENTS[app], environmentOf(container));
      const preStop = container.lifecycle?.preStop;
      const command = preStop?.exec?.command ?? [];
      const sleepSeconds =
        preStop?.sleep?.seconds ?? (command[0] === 'sleep' ? Number(command[1]) : NaN);
      expect({ app, sleepSeconds }).toEqual({ app, sleepSeconds: expect.any(Number) });
      expect(sleepSeconds).toBeGreaterThan(0);
      const grace = deployment.spec.template.spec.terminationGracePeriodSeconds ?? 30;
      expect(grace * 1000).toBeGreaterThan(sleepSeconds * 1000 + env.SHUTDOWN_GRACE_MS);
    }
  });

  it('runs every pod as the non-root user of the image, with a read-only root filesystem', () => {
    const uid = Number(runtimeUser().split(':')[0]);
    for (const { name, pod } of workloads()) {
      expect({ name, automount: pod.automountServiceAccountToken }).toEqual({
        name,
        automount: false,
      });
      for (const container of [...pod.containers, ...(pod.initContainers ?? [])]) {
        const context = { ...pod.securityContext, ...container.securityContext };
        expect({ name, context }).toMatchObject({
          name,
          context: {
            runAsNonRoot: true,
            runAsUser: uid,
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
          },
        });
      }
    }
  });

  it('turns service links off, since they would collide with the port variables', () => {
    // Kubernetes gives pods <SERVICE>_PORT=tcp://... for every Service of the namespace:
    // the Services edge, admin, chat, web and mock-upstream would set EDGE_PORT, ADMIN_PORT,
    // CHAT_PORT, WEB_PORT and MOCK_UPSTREAM_PORT to URLs and stop those apps at start-up.
    const colliding = services
      .map((service) => `${service.metadata.name.toUpperCase().replace(/-/g, '_')}_PORT`)
      .filter((name) => KNOWN.has(name));
    expect(colliding.length).toBeGreaterThan(0);
    for (const { name, pod } of workloads()) {
      expect({ name, enableServiceLinks: pod.enableServiceLinks }).toEqual({
        name,
        enableServiceLinks: false,
      });
    }
  });

  it("mounts a writable emptyDir at the edge's usage spool", () => {
    const deployment = deploymentOf('edge');
    const { container } = appContainer(deployment);
    const env = loadEnvironment(APP_ENVIRONMENTS.edge, environmentOf(container));
    expect(path.isAbsolute(env.USAGE_SPOOL_DIR)).toBe(true);
    const mount = container.volumeMounts?.find(
      (candidate) =>
        env.USAGE_SPOOL_DIR === candidate.mountPath ||
        env.USAGE_SPOOL_DIR.startsWith(`${candidate.mountPath}/`),
    );
    expect(mount).toBeDefined();
    const volume = deployment.spec.template.spec.volumes?.find((v) => v.name === mount?.name);
    expect(volume?.emptyDir).toBeDefined();
  });

  it('requests and limits CPU and memory for every container, requests within limits', () => {
    for (const { name, pod } of workloads()) {
      for (const container of pod.containers) {
        const { requests = {}, limits = {} } = container.resources ?? {};
        for (const resource of ['cpu', 'memory']) {
          const request = requests[resource];
          const limit = limits[resource];
          expect({ name, resource, request, limit }).toEqual({
            name,
            resource,
            request: expect.anything(),
            limit: expect.anything(),
          });
          expect(parseQuantity(request ?? NaN)).toBeLessThanOrEqual(parseQuantity(limit ?? NaN));
        }
      }
    }
  });

  it('runs two routers (leader and standby) and lets the HPA alone size the edge', () => {
    expect(deploymentOf('router').spec.replicas).toBe(2);
    expect(deploymentOf('edge').spec.replicas).toBeUndefined();
    const hpa = only(
      autoscalers.filter((autoscaler) => autoscaler.spec.scaleTargetRef.name === 'edge'),
      'HorizontalPodAutoscaler of the edge',
    );
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: deploymentOf('edge').metadata.name,
    });
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.spec.maxReplicas).toBeGreaterThanOrEqual(hpa.spec.minReplicas ?? 1);
    expect(hpa.spec.metrics).toContainEqual(
      expect.objectContaining({
        type: 'Resource',
        resource: expect.objectContaining({
          name: 'cpu',
          target: expect.objectContaining({ type: 'Utilization' }),
        }),
      }),
    );
  });

  it('runs the migrations CLI in a Job, with only what that CLI reads', () => {
    const job = only(jobs, 'Job');
    const container = only(job.spec.template.spec.containers, 'container of the migration Job');
    expect(container.command).toEqual(['node', 'libs/db/dist/migrate/cli.js']);
    expect(existsSync(path.join(repositoryRoot, 'libs/db/src/migrate/cli.ts'))).toBe(true);
    expect(['Never', 'OnFailure']).toContain(job.spec.template.spec.restartPolicy);
    // The CLI validates StoreEnv (libs/db/src/migrate/cli.ts).
    const readByCli = Object.keys(new StoreEnv());
    const names = settingsOf(container).map((setting) => setting.name);
    expect(names).toContain('DATABASE_URL');
    expect(names.filter((name) => !readByCli.includes(name) || !KNOWN.has(name))).toEqual([]);
    expect(() => loadEnvironment(StoreEnv, environmentOf(container))).not.toThrow();
  });

  it('runs one image everywhere, the one the kustomization tags', () => {
    const image = only(kustomization.images ?? [], 'image in kustomization.yaml');
    for (const { name, pod } of workloads()) {
      for (const container of pod.containers) {
        expect({ name, image: container.image }).toEqual({ name, image: image.name });
      }
    }
  });
});

describe('Docker image (deploy/docker/Dockerfile)', () => {
  const dockerfile = parseDockerfile(readFileSync(dockerfilePath, 'utf8'));
  const runs = dockerfile.stages.flatMap((stage) =>
    stage.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args),
  );

  it('builds in stages from Node 24 slim', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(2);
    const names = dockerfile.stages.map((stage) => stage.name);
    for (const stage of dockerfile.stages) {
      if (names.includes(stage.image)) continue; // FROM an earlier stage
      expect(stage.image).toMatch(/^node:24[\w.-]*-slim$/);
    }
  });

  it('installs from the lockfile and keeps only production dependencies', () => {
    expect(runs.some((run) => /pnpm install\b.*--frozen-lockfile/.test(run))).toBe(true);
    expect(runs.some((run) => /pnpm install\b.*--prod\b/.test(run))).toBe(true);
    expect(runs.some((run) => /pnpm (run )?build\b/.test(run))).toBe(true);
    const runtime = dockerfile.stages.at(-1);
    const copies = runtime?.instructions.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    expect(copies?.some((copy) => /\/prisma\s/.test(copy))).toBe(true);
  });

  it('runs as a numeric non-root user, the one the manifests run as', () => {
    const [user = '', group] = runtimeUser().split(':');
    expect(user).toMatch(/^\d+$/);
    expect(Number(user)).toBeGreaterThan(0);
    if (group !== undefined) expect(Number(group)).toBeGreaterThan(0);
    const uids = workloads().map(({ pod }) => pod.securityContext?.runAsUser);
    expect(new Set(uids)).toEqual(new Set([Number(user)]));
  });

  it('builds from sources only (.dockerignore)', () => {
    const ignored = readFileSync(path.join(repositoryRoot, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['**/node_modules', '**/dist', '.git']));
    for (const needed of ['pnpm-lock.yaml', 'package.json', 'prisma', 'apps', 'libs']) {
      const excludesIt = [needed, `${needed}/`, `${needed}/**`, `**/${needed}`];
      expect(ignored.filter((line) => excludesIt.includes(line))).toEqual([]);
    }
  });
});

// ---- nginx ----------------------------------------------------------------------------------

function nginxBinary(): string {
  const candidates = [
    ...(process.env.PATH ?? '').split(path.delimiter).map((dir) => path.join(dir, 'nginx')),
    '/usr/sbin/nginx',
    '/usr/local/sbin/nginx',
  ];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (!found) {
    throw new Error(
      'nginx is not installed, and the reverse-proxy checks need it: apt-get install -y nginx ' +
        '(.ci/run installs it)',
    );
  }
  return found;
}

/** A throwaway nginx prefix whose nginx.conf includes `include` inside http {}. */
function nginxPrefix(include: string, extraMain = ''): string {
  const prefix = mkdtempSync(path.join(os.tmpdir(), 'switchyard-nginx-'));
  writeFileSync(
    path.join(prefix, 'nginx.conf'),
    [
      extraMain,
      `pid ${prefix}/nginx.pid;`,
      `error_log ${prefix}/error.log;`,
      'events {}',
      'http {',
      '  access_log off;',
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
        (kind) => `  ${kind}_temp_path ${prefix}/${kind};`,
      ),
      `  include ${include};`,
      '}',
      '',
    ].join('\n'),
  );
  return prefix;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  return port;
}

describe('nginx reverse proxy (deploy/nginx/switchyard.conf)', () => {
  const text = readFileSync(nginxConfigPath, 'utf8');

  it('passes nginx -t', () => {
    const nginx = nginxBinary();
    const prefix = nginxPrefix(nginxConfigPath);
    try {
      const result = spawnSync(
        nginx,
        [
          '-t',
          '-q',
          '-c',
          path.join(prefix, 'nginx.conf'),
          '-p',
          prefix,
          '-e',
          `${prefix}/error.log`,
        ],
        { encoding: 'utf8' },
      );
      const output = `${result.stdout}${result.stderr}`;
      if (result.status !== 0 && /bind\(\) to 0\.0\.0\.0:80 failed \(13/.test(output)) {
        throw new Error(
          `nginx -t must bind port 80 (listen 80) to test the file: run as root, as CI does.\n${output}`,
        );
      }
      expect({ status: result.status, output }).toEqual({ status: 0, output: '' });
    } finally {
      rmSync(prefix, { recursive: true, force: true });
    }
  });

  it('holds the values of docs/specification.md, "Reverse proxy", exactly', () => {
    const directives = flattenNginx(parseNginx(text));
    const find = (name: string) => directives.filter((directive) => directive.name === name);
    const locationRoot = (name: string) =>
      find(name).filter((d) => d.context.join(' > ') === 'server > location /');
    // Listen on port 80.
    expect(find('listen').map((d) => d.args)).toEqual([['80']]);
    // The connection-upgrade variable: `upgrade` by default and for a websocket upgrade header.
    const map = only(find('map'), 'map');
    expect(map.args).toEqual(['$http_upgrade', '$connection_upgrade']);
    expect(map.block?.map((entry) => [entry.name, ...entry.args])).toEqual([
      ['default', 'upgrade'],
      ['websocket', 'upgrade'],
    ]);
    // The gateway on the loopback address, port 3000, over HTTP/1.1.
    expect(locationRoot('proxy_pass').map((d) => d.args)).toEqual([['http://127.0.0.1:3000']]);
    expect(locationRoot('proxy_http_version').map((d) => d.args)).toEqual([['1.1']]);
    // Host, X-Real-IP, X-Forwarded-For (the client address chain), and the upgrade pair.
    expect(locationRoot('proxy_set_header').map((d) => d.args)).toEqual([
      ['Host', '$host'],
      ['X-Real-IP', '$remote_addr'],
      ['X-Forwarded-For', '$proxy_add_x_forwarded_for'],
      ['Upgrade', '$http_upgrade'],
      ['Connection', '$connection_upgrade'],
    ]);
    // Timeouts: connect 300 s, read 300 s, send 12 s.
    expect(locationRoot('proxy_connect_timeout').map((d) => d.args)).toEqual([['300s']]);
    expect(locationRoot('proxy_read_timeout').map((d) => d.args)).toEqual([['300s']]);
    expect(locationRoot('proxy_send_timeout').map((d) => d.args)).toEqual([['12s']]);
    // Streams are passed on as they come.
    expect(locationRoot('proxy_buffering').map((d) => d.args)).toEqual([['off']]);
    expect(text).toMatch(/#[^\n]*Server-Sent Events/);
  });

  describe('in front of a gateway', () => {
    let nginx: ChildProcess | undefined;
    let prefix = '';
    let gateway: http.Server | undefined;
    let proxyPort = 0;
    const seen: { url: string; httpVersion: string; headers: http.IncomingHttpHeaders }[] = [];
    let releaseStream: () => void = () => undefined;
    // Upgraded connections leave the HTTP server's books: closed by hand at the end.
    const upgraded = new Set<Socket>();

    beforeAll(async () => {
      // A stand-in gateway that records what reaches it.
      gateway = http.createServer((request, response) => {
        seen.push({
          url: request.url ?? '',
          httpVersion: request.httpVersion,
          headers: request.headers,
        });
        if (request.url === '/v1/chat/completions') {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          response.write('data: {"n":1}\n\n');
          // The rest only once the client has the first event (or, failing that, much later).
          const guard = setTimeout(() => response.end('data: too-late\n\n'), 10_000);
          releaseStream = () => {
            clearTimeout(guard);
            response.end('data: [DONE]\n\n');
          };
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{}');
      });
      gateway.on('upgrade', (request: http.IncomingMessage, socket: Socket) => {
        upgraded.add(socket);
        seen.push({
          url: request.url ?? '',
          httpVersion: request.httpVersion,
          headers: request.headers,
        });
        socket.write(
          'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
        );
        socket.on('data', (chunk: Buffer) => socket.write(chunk)); // echo
      });
      gateway.listen(0, '127.0.0.1');
      await once(gateway, 'listening');
      const gatewayPort = (gateway.address() as AddressInfo).port;

      // The real file, with only the two addresses moved to free ports.
      proxyPort = await freePort();
      const listen = text.match(/listen 80;/g) ?? [];
      const upstream = text.match(/proxy_pass http:\/\/127\.0\.0\.1:3000;/g) ?? [];
      expect([listen.length, upstream.length]).toEqual([1, 1]);
      const moved = text
        .replace('listen 80;', `listen 127.0.0.1:${proxyPort};`)
        .replace(
          'proxy_pass http://127.0.0.1:3000;',
          `proxy_pass http://127.0.0.1:${gatewayPort};`,
        );
      prefix = nginxPrefix('switchyard.conf', 'daemon off;\nmaster_process off;');
      writeFileSync(path.join(prefix, 'switchyard.conf'), moved);
      const child = spawn(
        nginxBinary(),
        ['-c', path.join(prefix, 'nginx.conf'), '-p', prefix, '-e', `${prefix}/error.log`],
        {
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      nginx = child;
      let errors = '';
      child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new WaitAborted(`nginx exited: ${errors}`);
          return fetch(`http://127.0.0.1:${proxyPort}/ready`);
        },
        { timeoutMs: APP_START_TIMEOUT_MS, what: `nginx listening on ${proxyPort}` },
      );
      seen.length = 0;
    });

    afterAll(async () => {
      if (nginx && nginx.exitCode === null) {
        const exited = once(nginx, 'exit');
        nginx.kill('SIGTERM');
        await exited;
      }
      if (gateway) {
        for (const socket of upgraded) socket.destroy();
        gateway.closeAllConnections();
        await new Promise((resolve) => gateway?.close(resolve));
      }
      if (prefix) rmSync(prefix, { recursive: true, force: true });
    });

    function send(options: http.RequestOptions): Promise<http.IncomingMessage> {
      return new Promise((resolve, reject) => {
        const request = http.request({ host: '127.0.0.1', port: proxyPort, ...options }, resolve);
        request.on('error', reject);
        request.end();
      });
    }

    it('answers /metrics itself with a 404, never passing it to the gateway', async () => {
      for (const pathname of ['/metrics', '/metrics?x=1']) {
        const response = await send({ path: pathname });
        response.resume();
        expect({ pathname, status: response.statusCode }).toEqual({ pathname, status: 404 });
      }
      expect(seen.splice(0)).toEqual([]);
    });

    it('forwards Host, X-Real-IP and the X-Forwarded-For chain over HTTP/1.1', async () => {
      const response = await send({
        path: '/v1/models',
        headers: { host: 'api.example.com', 'x-forwarded-for': '203.0.113.7' },
      });
      response.resume();
      expect(response.statusCode).toBe(200);
      const request = only(seen.splice(0), 'request at the gateway');
      expect(request.httpVersion).toBe('1.1');
      expect(request.headers).toMatchObject({
        host: 'api.example.com',
        'x-real-ip': '127.0.0.1',
        'x-forwarded-for': '203.0.113.7, 127.0.0.1',
        // The connection-upgrade variable is `upgrade` by default.
        connection: 'upgrade',
      });
      expect(request.headers.upgrade).toBeUndefined();
    });

    it('passes a websocket upgrade through', async () => {
      const socket = await new Promise<Socket>((resolve, reject) => {
        const request = http.request({
          host: '127.0.0.1',
          port: proxyPort,
          path: '/ws',
          headers: { connection: 'Upgrade', upgrade: 'websocket' },
        });
        request.on('upgrade', (_response, upgraded) => resolve(upgraded));
        request.on('response', (response) =>
          reject(new Error(`no upgrade: ${response.statusCode}`)),
        );
        request.on('error', reject);
        request.end();
      });
      const echoed = once(socket, 'data');
      socket.write('ping');
      expect(String((await echoed)[0])).toBe('ping');
      socket.destroy();
      const request = only(seen.splice(0), 'upgrade at the gateway');
      expect(request.headers).toMatchObject({ upgrade: 'websocket', connection: 'upgrade' });
    });

    it('passes a server-sent event stream on event by event', async () => {
      const response = await send({ path: '/v1/chat/completions', method: 'POST' });
      let body = '';
      for await (const chunk of response) {
        body += String(chunk);
        // The gateway ends the stream only after this client saw its first event.
        if (body.includes('data: {"n":1}')) releaseStream();
      }
      expect(body).toBe('data: {"n":1}\n\ndata: [DONE]\n\n');
      seen.length = 0;
    });
  });
});
