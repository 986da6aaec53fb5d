import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  deployDirectory,
  flattenNginx,
  nginxConfigPath,
  parseNginx,
  parseQuantity,
  type Container,
  type KubeObject,
  type PodSpec,
} from './deploy-files.js';

// Every kustomization of deploy/k8s as `kubectl kustomize` renders it, validated against the
// Kubernetes API's JSON schemas (kubernetes-models, and its KEDA and Prometheus Operator
// packages for those CRDs), then held to the rules of deploy/README.md: what each overlay
// runs, the Ingress settings against deploy/nginx, who may talk to whom, autoscaling of
// every stateless tier, and hardened pods.

const k8s = path.join(deployDirectory, 'k8s');
const APPS = ['edge', 'router', 'admin', 'chat', 'metering', 'web'] as const;
type App = (typeof APPS)[number];
const PORTS: Record<App, number> = {
  edge: 3000,
  admin: 3001,
  chat: 3002,
  router: 3003,
  metering: 3004,
  web: 8080,
};
/** Where each app serves /metrics: router and metering on their one port. */
const OPS_PORTS: Record<App, number> = {
  edge: 3010,
  admin: 3011,
  chat: 3012,
  router: 3003,
  metering: 3004,
  web: 8081,
};
const NAMESPACE = 'switchyard';

function kustomize(directory: string): KubeObject[] {
  const result = spawnSync('kubectl', ['kustomize', directory], { encoding: 'utf8' });
  if (result.error)
    throw new Error(`kubectl is needed to render ${directory}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`kubectl kustomize ${directory}:\n${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((document) => document.toJS() as KubeObject | null)
    .filter((object): object is KubeObject => object !== null);
}

const COMPONENTS = ['keda', 'service-monitor', 'prometheus-rule', 'pgbouncer', 'read-replica'];
const WITH_COMPONENTS = `overlays/production + ${COMPONENTS.map((c) => `components/${c}`).join(' + ')}`;

/** The production overlay with every optional component, as an operator would combine them. */
function productionWithComponents(): KubeObject[] {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'switchyard-kustomize-'));
  try {
    // kustomize takes only relative paths to other kustomizations.
    const relative = (target: string) => path.relative(directory, path.join(k8s, target));
    writeFileSync(
      path.join(directory, 'kustomization.yaml'),
      [
        'apiVersion: kustomize.config.k8s.io/v1beta1',
        'kind: Kustomization',
        `resources: [${relative('overlays/production')}]`,
        `components: [${COMPONENTS.map((c) => relative(`components/${c}`)).join(', ')}]`,
      ].join('\n'),
    );
    return kustomize(directory);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

const renderings: Record<string, KubeObject[]> = {
  base: kustomize(path.join(k8s, 'base')),
  'overlays/local': kustomize(path.join(k8s, 'overlays/local')),
  'overlays/production': kustomize(path.join(k8s, 'overlays/production')),
  [WITH_COMPONENTS]: productionWithComponents(),
};
const local = renderings['overlays/local']!;
const production = renderings['overlays/production']!;
const withComponents = renderings[WITH_COMPONENTS]!;

// ---- reading the rendered objects ---------------------------------------------------------

// The rules read rendered objects as plain JSON; their shape is what the schema test checks.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Workload extends KubeObject {
  spec: {
    replicas?: number;
    template: {
      metadata: { labels: Record<string, string> };
      spec: PodSpec & Record<string, Json>;
    };
  };
}
type Selector = {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
};

const ofKind = (objects: KubeObject[], kind: string) => objects.filter((o) => o.kind === kind);
const named = (objects: KubeObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name) as Json;
const workloads = (objects: KubeObject[]) =>
  objects.filter((o) => ['Deployment', 'StatefulSet', 'Job'].includes(o.kind)) as Workload[];

/** The container of a workload that runs a Switchyard app, if any. */
function appOf(workload: Workload): App | undefined {
  const command = workload.spec.template.spec.containers[0]?.command?.join(' ') ?? '';
  return APPS.find((app) => command.endsWith(`apps/${app}/dist/main.js`));
}

// ---- schemas --------------------------------------------------------------------------------

/** The kubernetes-models class for an object's apiVersion and kind. */
async function modelOf(object: KubeObject): Promise<new (data: unknown) => { validate(): void }> {
  const packages: Record<string, string> = {
    'keda.sh': '@kubernetes-models/keda',
    'monitoring.coreos.com': '@kubernetes-models/prometheus-operator',
  };
  const group = object.apiVersion.includes('/') ? object.apiVersion.split('/')[0]! : '';
  const module = (await import(
    `${packages[group] ?? 'kubernetes-models'}/${object.apiVersion}/${object.kind}`
  )) as Record<string, new (data: unknown) => { validate(): void }>;
  return module[object.kind]!;
}

describe.each(Object.entries(renderings))('%s', (_, objects) => {
  it('renders, and every object is valid against the Kubernetes API schema of its kind', async () => {
    expect(objects.length).toBeGreaterThan(0);
    const invalid: string[] = [];
    for (const object of objects) {
      const Model = await modelOf(object);
      try {
        new Model(object).validate();
      } catch (error) {
        invalid.push(`${object.kind} ${object.metadata.name}: ${(error as Error).message}`);
      }
    }
    expect(invalid).toEqual([]);
  });

  it('runs every pod as non-root, with a read-only root filesystem, no capabilities and seccomp RuntimeDefault', () => {
    for (const workload of workloads(objects)) {
      const pod = workload.spec.template.spec;
      const where = `${workload.kind} ${workload.metadata.name}`;
      expect({ where, runAsNonRoot: pod.securityContext?.runAsNonRoot }).toEqual({
        where,
        runAsNonRoot: true,
      });
      expect({ where, seccomp: pod.securityContext?.seccompProfile?.type }).toEqual({
        where,
        seccomp: 'RuntimeDefault',
      });
      for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
        expect({ where, securityContext: container.securityContext }).toEqual({
          where,
          securityContext: expect.objectContaining({
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
          }),
        });
      }
    }
  });

  it('probes every app on /healthz and /readyz, and gives it longer to stop than its drain', () => {
    for (const workload of workloads(objects).filter((w) => appOf(w))) {
      const pod = workload.spec.template.spec;
      const container = pod.containers[0] as Container & {
        env?: { name: string; value?: string }[];
      };
      expect(container.livenessProbe?.httpGet?.path).toBe('/healthz');
      expect(container.startupProbe?.httpGet?.path).toBe('/healthz');
      expect(container.readinessProbe?.httpGet?.path).toBe('/readyz');
      const drainMs = Number(
        container.env?.find((v) => v.name === 'SHUTDOWN_GRACE_MS')?.value ?? 10_000,
      );
      const preStop = Number(container.lifecycle?.preStop?.exec?.command.at(-1) ?? 0);
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(drainMs / 1000 + preStop);
    }
  });
});

// ---- what each overlay runs -----------------------------------------------------------------

describe('what runs where', () => {
  const names = (objects: KubeObject[]) =>
    workloads(objects)
      .map((w) => w.metadata.name)
      .sort();

  it('keeps the fake provider, Postgres and Redis out of the base and production', () => {
    for (const objects of [renderings.base!, production]) {
      expect(names(objects)).toEqual([
        'admin',
        'chat',
        'edge',
        'metering',
        'router',
        'switchyard-migrate',
        'web',
      ]);
    }
  });

  it('adds mock-upstream and one Postgres and one Redis in the local overlay', () => {
    expect(names(local)).toEqual([
      'admin',
      'chat',
      'edge',
      'metering',
      'mock-upstream',
      'postgres',
      'redis',
      'router',
      'switchyard-migrate',
      'web',
    ]);
    for (const name of ['mock-upstream', 'postgres', 'redis']) {
      expect(workloads(local).find((w) => w.metadata.name === name)!.spec.replicas).toBe(1);
    }
    expect(named(local, 'Service', 'postgres').spec.ports[0].port).toBe(5432);
    expect(named(local, 'Service', 'redis').spec.ports[0].port).toBe(6379);
    // BullMQ must never lose a queued job to eviction.
    expect(
      named(local, 'Deployment', 'redis').spec.template.spec.containers[0].args.join(' '),
    ).toContain('--maxmemory-policy noeviction');
  });

  it('sizes and spreads every production app: resources, anti-affinity, zones and nodes', () => {
    for (const app of APPS) {
      const pod = named(production, 'Deployment', app).spec.template.spec;
      const resources = pod.containers[0].resources;
      for (const resource of ['cpu', 'memory']) {
        expect(parseQuantity(resources.requests[resource])).toBeLessThanOrEqual(
          parseQuantity(resources.limits[resource]),
        );
      }
      const antiAffinity =
        pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution;
      expect(antiAffinity).toContainEqual(
        expect.objectContaining({
          podAffinityTerm: {
            topologyKey: 'kubernetes.io/hostname',
            labelSelector: { matchLabels: { 'app.kubernetes.io/name': app } },
          },
        }),
      );
      const spread = pod.topologySpreadConstraints as {
        topologyKey: string;
        labelSelector: Selector;
      }[];
      expect(spread.map((constraint) => constraint.topologyKey).sort()).toEqual([
        'kubernetes.io/hostname',
        'topology.kubernetes.io/zone',
      ]);
      for (const constraint of spread)
        expect(constraint.labelSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': app });
    }
    expect(named(production, 'Deployment', 'admin').spec.replicas).toBe(2);
    expect(named(production, 'Deployment', 'router').spec.replicas).toBe(2);
    expect(new Set(production.map((o) => o.metadata.namespace))).toEqual(new Set([NAMESPACE]));
  });
});

// ---- autoscaling ----------------------------------------------------------------------------

describe('autoscaling', () => {
  function autoscalerOf(objects: KubeObject[], app: App): Json {
    const found = ofKind(objects, 'HorizontalPodAutoscaler').filter(
      (hpa: Json) => hpa.spec.scaleTargetRef.name === app,
    );
    return found.length === 1 ? found[0] : undefined;
  }

  it.each(['edge', 'web', 'chat'] as const)(
    'scales %s on CPU, and leaves its replicas to the HPA',
    (app) => {
      for (const objects of [renderings.base!, local, production]) {
        const hpa = autoscalerOf(objects, app);
        expect(hpa.spec.metrics).toEqual([
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
          },
        ]);
        expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas);
        expect(named(objects, 'Deployment', app).spec.replicas).toBeUndefined();
      }
      expect(autoscalerOf(production, app).spec.minReplicas).toBeGreaterThanOrEqual(2);
    },
  );

  it('scales metering on its billing lag, the metric its /metrics exports', () => {
    const source = readFileSync(
      path.join(deployDirectory, '../apps/metering/src/usage/usage.metrics.ts'),
      'utf8',
    );
    expect(source).toContain("name: 'metering_lag_seconds'");
    for (const objects of [renderings.base!, local, production]) {
      expect(autoscalerOf(objects, 'metering').spec.metrics).toEqual([
        {
          type: 'External',
          external: {
            metric: { name: 'metering_lag_seconds' },
            target: { type: 'Value', value: expect.any(String) },
          },
        },
      ]);
      expect(named(objects, 'Deployment', 'metering').spec.replicas).toBeUndefined();
    }
  });

  it('with components/keda, scales metering by a ScaledObject on the same metric, and no HPA of its own', () => {
    expect(autoscalerOf(withComponents, 'metering')).toBeUndefined();
    const scaled = named(withComponents, 'ScaledObject', 'metering');
    expect(scaled.spec.scaleTargetRef.name).toBe('metering');
    expect(scaled.spec.triggers[0].metadata.query).toContain('metering_lag_seconds');
  });

  it('with components/pgbouncer and components/read-replica, routes the apps through PgBouncer, the migration around it, and the admin reports to the replica', () => {
    const secretKey = (workload: Json, variable: string) =>
      workload.spec.template.spec.containers[0].env.find((v: Json) => v.name === variable)
        ?.valueFrom?.secretKeyRef?.key;
    expect(secretKey(named(withComponents, 'Job', 'switchyard-migrate'), 'DATABASE_URL')).toBe(
      'DATABASE_DIRECT_URL',
    );
    expect(secretKey(named(withComponents, 'Deployment', 'admin'), 'DATABASE_READ_URL')).toBe(
      'DATABASE_READ_URL',
    );
    expect(secretKey(named(production, 'Job', 'switchyard-migrate'), 'DATABASE_URL')).toBe(
      'DATABASE_URL',
    );
    const pgbouncer = named(withComponents, 'Deployment', 'pgbouncer');
    expect(pgbouncer.spec.replicas).toBeGreaterThanOrEqual(2);
    expect(named(withComponents, 'Service', 'pgbouncer').spec.ports[0].port).toBe(6432);
    const ini = named(withComponents, 'ConfigMap', 'pgbouncer-config').data['pgbouncer.ini'];
    expect(ini).toMatch(/^pool_mode = transaction$/m);
  });

  it('keeps the router at a leader and a standby, with no autoscaler', () => {
    for (const objects of Object.values(renderings)) {
      expect(autoscalerOf(objects, 'router')).toBeUndefined();
      expect(named(objects, 'Deployment', 'router').spec.replicas).toBe(2);
    }
  });
});

// ---- Ingress --------------------------------------------------------------------------------

describe('Ingress', () => {
  const nginx = flattenNginx(parseNginx(readFileSync(nginxConfigPath, 'utf8')));
  const directive = (name: string) => nginx.find((d) => d.name === name)!.args[0]!;
  const seconds = (value: string) => String(parseInt(value, 10));

  it.each(['edge', 'web'])(
    'routes to %s through ingress-nginx with TLS and the deploy/nginx settings',
    (app) => {
      for (const objects of [renderings.base!, local, production]) {
        const ingress = named(objects, 'Ingress', app);
        expect(ingress.spec.ingressClassName).toBe('nginx');
        expect(ingress.spec.rules[0].http.paths[0].backend.service).toEqual({
          name: app,
          port: { name: 'http' },
        });
        expect(ingress.spec.tls).toEqual([
          { hosts: [ingress.spec.rules[0].host], secretName: 'switchyard-tls' },
        ]);
        expect(ingress.metadata.annotations).toEqual(
          expect.objectContaining({
            'nginx.ingress.kubernetes.io/proxy-connect-timeout': seconds(
              directive('proxy_connect_timeout'),
            ),
            'nginx.ingress.kubernetes.io/proxy-read-timeout': seconds(
              directive('proxy_read_timeout'),
            ),
            'nginx.ingress.kubernetes.io/proxy-send-timeout': seconds(
              directive('proxy_send_timeout'),
            ),
            'nginx.ingress.kubernetes.io/proxy-body-size': directive('client_max_body_size'),
            'nginx.ingress.kubernetes.io/proxy-buffering': directive('proxy_buffering'),
            'nginx.ingress.kubernetes.io/proxy-http-version': directive('proxy_http_version'),
          }),
        );
        // The Service it names exposes that port.
        expect(
          named(objects, 'Service', app).spec.ports.map((p: { name: string }) => p.name),
        ).toContain('http');
      }
      expect(
        ofKind(renderings.base!, 'Ingress')
          .map((i) => i.metadata.name)
          .sort(),
      ).toEqual(['edge', 'web']);
    },
  );
});

// ---- NetworkPolicies ------------------------------------------------------------------------

interface Peer {
  namespace?: string;
  labels?: Record<string, string>;
  /** An address outside the cluster. */
  external?: boolean;
}
interface PolicyPeer {
  podSelector?: Selector;
  namespaceSelector?: Selector;
  ipBlock?: { cidr: string };
}
interface PolicyRule {
  from?: PolicyPeer[];
  to?: PolicyPeer[];
  ports?: { port?: number; protocol?: string }[];
}
interface NetworkPolicy extends KubeObject {
  spec: {
    podSelector: Selector;
    policyTypes: string[];
    ingress?: PolicyRule[];
    egress?: PolicyRule[];
  };
}

function selects(selector: Selector | undefined, labels: Record<string, string> = {}): boolean {
  if (!selector) return false;
  const byLabel = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  const byExpression = (selector.matchExpressions ?? []).every((e) => {
    if (e.operator === 'In') return e.values!.includes(labels[e.key] ?? '\0');
    if (e.operator === 'NotIn') return !e.values!.includes(labels[e.key] ?? '\0');
    if (e.operator === 'Exists') return e.key in labels;
    throw new Error(`operator ${e.operator} not handled here`);
  });
  return byLabel && byExpression;
}

function peerMatches(rulePeer: PolicyPeer, peer: Peer): boolean {
  if (rulePeer.ipBlock) return peer.external === true;
  if (peer.external) return false;
  const namespace = peer.namespace ?? NAMESPACE;
  const namespaceMatches = rulePeer.namespaceSelector
    ? selects(rulePeer.namespaceSelector, { 'kubernetes.io/metadata.name': namespace })
    : namespace === NAMESPACE;
  const podMatches = rulePeer.podSelector ? selects(rulePeer.podSelector, peer.labels) : true;
  return namespaceMatches && podMatches;
}

/** Whether the policies let traffic from `from` reach `to` on a port (both directions). */
function allowed(
  objects: KubeObject[],
  from: Peer,
  to: Peer,
  port: number,
  protocol = 'TCP',
): boolean {
  const policies = ofKind(objects, 'NetworkPolicy') as NetworkPolicy[];
  const permits = (direction: 'Ingress' | 'Egress', subject: Peer, other: Peer) => {
    if (subject.external || (subject.namespace ?? NAMESPACE) !== NAMESPACE) return true;
    const applying = policies.filter(
      (p) => p.spec.policyTypes.includes(direction) && selects(p.spec.podSelector, subject.labels),
    );
    if (applying.length === 0) return true;
    return applying.some((p) =>
      (direction === 'Ingress' ? p.spec.ingress : p.spec.egress)?.some((rule) => {
        const peers = direction === 'Ingress' ? rule.from : rule.to;
        const portOk =
          !rule.ports?.length ||
          rule.ports.some(
            (p) => (p.port === undefined || p.port === port) && (p.protocol ?? 'TCP') === protocol,
          );
        return portOk && (!peers?.length || peers.some((peer) => peerMatches(peer, other)));
      }),
    );
  };
  return permits('Egress', from, to) && permits('Ingress', to, from);
}

describe('NetworkPolicies', () => {
  const pod = (app: string): Peer => ({
    labels: { 'app.kubernetes.io/name': app, 'app.kubernetes.io/part-of': 'switchyard' },
  });
  const internet: Peer = { external: true };
  const ingressController: Peer = {
    namespace: 'ingress-nginx',
    labels: { 'app.kubernetes.io/name': 'ingress-nginx' },
  };
  const monitoring: Peer = {
    namespace: 'monitoring',
    labels: { 'app.kubernetes.io/name': 'prometheus' },
  };
  const migrate = (objects: KubeObject[]): Peer => ({
    labels: named(objects, 'Job', 'switchyard-migrate').spec.template.metadata.labels,
  });

  it.each(['base', 'overlays/local', 'overlays/production'])(
    'in %s, lets only edge and web be reached from outside',
    (name) => {
      const objects = renderings[name]!;
      for (const app of APPS) {
        const open = ['edge', 'web'].includes(app);
        expect({ app, fromInternet: allowed(objects, internet, pod(app), PORTS[app]) }).toEqual({
          app,
          fromInternet: open,
        });
        expect({
          app,
          fromIngress: allowed(objects, ingressController, pod(app), PORTS[app]),
        }).toEqual({
          app,
          fromIngress: open,
        });
        // Monitoring scrapes every app's /metrics, on its operations port.
        expect({
          app,
          fromMonitoring: allowed(objects, monitoring, pod(app), OPS_PORTS[app]),
        }).toEqual({
          app,
          fromMonitoring: true,
        });
        // Nobody else reaches an operations port that is not the app's only port.
        if (OPS_PORTS[app] !== PORTS[app]) {
          expect({
            app,
            opsFromInternet: allowed(objects, internet, pod(app), OPS_PORTS[app]),
            opsFromIngress: allowed(objects, ingressController, pod(app), OPS_PORTS[app]),
          }).toEqual({ app, opsFromInternet: false, opsFromIngress: false });
        }
      }
    },
  );

  it.each(['base', 'overlays/local', 'overlays/production'])(
    'in %s, lets admin be reached only from edge, chat only from web, router and metering from no app',
    (name) => {
      const objects = renderings[name]!;
      const callers = (app: App) =>
        APPS.filter(
          (caller) => caller !== app && allowed(objects, pod(caller), pod(app), PORTS[app]),
        );
      expect(callers('admin')).toEqual(['edge']);
      expect(callers('chat')).toEqual(['web']);
      expect(callers('router')).toEqual([]);
      expect(callers('metering')).toEqual([]);
      expect(allowed(objects, pod('admin'), pod('admin'), 9999)).toBe(false);
    },
  );

  it.each(['base', 'overlays/local', 'overlays/production'])(
    'in %s, lets every pod resolve names and reach Postgres and Redis, and only callers of providers the internet',
    (name) => {
      const objects = renderings[name]!;
      const dns: Peer = { namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } };
      for (const subject of [...APPS.map(pod), migrate(objects)]) {
        expect(allowed(objects, subject, dns, 53, 'UDP')).toBe(true);
        expect(allowed(objects, subject, internet, 5432)).toBe(true);
        expect(allowed(objects, subject, internet, 6379)).toBe(true);
      }
      const reachInternet = APPS.filter((app) => allowed(objects, pod(app), internet, 443));
      // admin's channel test calls the provider itself (apps/admin/src/channels/channel-tester.ts).
      expect(reachInternet).toEqual(['edge', 'router', 'admin', 'chat']);
      expect(allowed(objects, migrate(objects), internet, 443)).toBe(false);
    },
  );

  it('in the local overlay, lets the apps reach the in-cluster Postgres and Redis, and the callers of providers mock-upstream', () => {
    for (const subject of [...APPS.map(pod), migrate(local)]) {
      expect(allowed(local, subject, pod('postgres'), 5432)).toBe(true);
      expect(allowed(local, subject, pod('redis'), 6379)).toBe(true);
    }
    const callers = APPS.filter((app) => allowed(local, pod(app), pod('mock-upstream'), 18080));
    expect(callers).toEqual(['edge', 'router', 'admin', 'chat']);
    expect(allowed(local, internet, pod('postgres'), 5432)).toBe(false);
  });
});

// ---- ServiceMonitor -------------------------------------------------------------------------

it('with components/service-monitor, scrapes /metrics on the operations port of every app Service', () => {
  const monitors = ofKind(withComponents, 'ServiceMonitor') as Json[];
  expect(monitors.map((m) => m.metadata.name).sort()).toEqual([...APPS].sort());
  for (const monitor of monitors) {
    const app = monitor.metadata.name as App;
    const service = named(withComponents, 'Service', app);
    expect(selects(monitor.spec.selector, service.metadata.labels)).toBe(true);
    const portName = OPS_PORTS[app] === PORTS[app] ? 'http' : 'ops';
    expect(monitor.spec.endpoints).toEqual([
      expect.objectContaining({ port: portName, path: '/metrics' }),
    ]);
    const port = service.spec.ports.find((p: { name: string }) => p.name === portName);
    expect({ app, port: port?.port }).toEqual({ app, port: OPS_PORTS[app] });
  }
});
