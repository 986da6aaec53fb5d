import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { repositoryRoot, startApp, type AppProcess } from '@switchyard/testing';
import { Stack, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// The monitoring that ships in deploy/observability against the code it watches: the alert
// rules pass Prometheus's own checks and unit tests, the Operator's copy says the same, and
// every metric an alert or a dashboard panel names is one a running service exports
// (docs/operations.md).

const observability = path.join(repositoryRoot, 'deploy/observability');
const rulesFile = path.join(observability, 'prometheus/alerts.yml');
const grafana = path.join(observability, 'grafana');

interface RuleGroup {
  name: string;
  rules: { alert: string; expr: string; labels: { severity: string }; annotations: object }[];
}
interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
}

const groups = (parseYaml(readFileSync(rulesFile, 'utf8')) as { groups: RuleGroup[] }).groups;
const dashboards = readdirSync(grafana)
  .filter((file) => file.endsWith('.json'))
  .map((file) => ({
    file,
    dashboard: JSON.parse(readFileSync(path.join(grafana, file), 'utf8')) as Dashboard,
  }));

/** PromQL's words that are not metric names. */
const PROMQL_WORDS = new Set([
  ...['sum', 'min', 'max', 'avg', 'count', 'topk', 'bottomk', 'quantile', 'stddev', 'group'],
  ...['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless'],
  ...['bool', 'offset', 'rate', 'irate', 'increase', 'delta', 'deriv', 'histogram_quantile'],
  ...['min_over_time', 'max_over_time', 'avg_over_time', 'abs', 'clamp_min', 'vector', 'time'],
]);

/** The metric names a PromQL expression reads. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // label values
    .replace(/\b\d+(\.\d+)?(e[+-]?\d+)?\b/gi, '') // numbers, 1e6 among them
    .replace(/\{[^}]*\}/g, '') // matchers
    .replace(/\[[^\]]*\]/g, '') // ranges
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ''); // grouping labels
  const names = [...bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(?![a-zA-Z0-9_:]|\s*\()/g)].map(
    (m) => m[0],
  );
  return names.filter((name) => !PROMQL_WORDS.has(name) && !/^\d/.test(name));
}

/** `name → type` of every metric family in a Prometheus text scrape. */
function families(scrape: string): Map<string, string> {
  return new Map(
    [...scrape.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!] as const),
  );
}

/** A name as a query reads it exists: itself, or a histogram's bucket, sum or count. */
function exported(name: string, known: Map<string, string>): boolean {
  if (known.has(name)) return true;
  const histogram = /^(.*)_(bucket|sum|count)$/.exec(name);
  return histogram !== null && known.get(histogram[1]!) === 'histogram';
}

describe('alert rules', () => {
  it('pass promtool check rules and their unit tests', () => {
    for (const args of [
      ['check', 'rules', rulesFile],
      ['test', 'rules', path.join(observability, 'prometheus/alerts.test.yml')],
    ]) {
      const run = spawnSync('promtool', args, { encoding: 'utf8' });
      if (run.error)
        throw new Error(`promtool is needed (Debian: prometheus): ${run.error.message}`);
      expect({ args, status: run.status, output: run.stdout + run.stderr }).toEqual(
        expect.objectContaining({ status: 0 }),
      );
    }
  });

  it('have a severity, a summary and a description each, and a unit test each', () => {
    const tests = readFileSync(path.join(observability, 'prometheus/alerts.test.yml'), 'utf8');
    for (const rule of groups.flatMap((group) => group.rules)) {
      expect({ alert: rule.alert, severity: rule.labels.severity }).toEqual({
        alert: rule.alert,
        severity: expect.stringMatching(/^(critical|warning)$/),
      });
      expect(Object.keys(rule.annotations).sort()).toEqual(['description', 'summary']);
      expect(tests).toContain(`alertname: ${rule.alert}`);
    }
  });

  it("are the Prometheus Operator component's rules too", () => {
    const component = parseYaml(
      readFileSync(
        path.join(repositoryRoot, 'deploy/k8s/components/prometheus-rule/prometheus-rule.yaml'),
        'utf8',
      ),
    ) as { kind: string; spec: { groups: RuleGroup[] } };
    expect(component.kind).toBe('PrometheusRule');
    expect(component.spec.groups).toEqual(groups);
  });
});

describe('dashboards', () => {
  it.each(dashboards)('$file: a unique id and a query in every panel', ({ dashboard }) => {
    expect(dashboard.uid).toMatch(/^switchyard-/);
    const withoutQuery = dashboard.panels
      .filter((panel) => panel.type !== 'row' && !panel.targets?.length)
      .map((panel) => panel.title);
    expect(withoutQuery).toEqual([]);
  });

  it('are read for their metric names, which the check below relies on', () => {
    expect(
      metricNames(
        'sum by (le, model) (rate(gateway_request_duration_seconds_bucket{model="a"}[5m])) / 1e6',
      ),
    ).toEqual(['gateway_request_duration_seconds_bucket']);
    expect(
      metricNames('max by (model) (router_model_channels{state="routable"}) == 0 and up'),
    ).toEqual(['router_model_channels', 'up']);
  });
});

describe('the metrics alerts and dashboards read', () => {
  const stack = new Stack({
    admin: { username: 'root', password: 'observability-spec-password' },
    metering: 1,
  });
  let chat: AppProcess | undefined;

  beforeAll(async () => {
    await stack.start();
    chat = await startApp('chat', {
      env: {
        ...stack.env,
        CHAT_ADMIN_USERNAME: 'chatroot',
        CHAT_ADMIN_PASSWORD: 'observability-spec-password',
      },
      readyPath: '/readyz',
    });
  }, STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await chat?.stop();
    await stack.stop();
  });

  it('are exported by the running services', async () => {
    const services = [stack.edge, stack.routers[0]!, stack.metering!, stack.admin!, chat!];
    const known = new Map<string, string>();
    for (const service of services) {
      const scrape = await fetch(`${service.opsUrl}/metrics`);
      expect(scrape.status).toBe(200);
      for (const [name, type] of families(await scrape.text())) known.set(name, type);
    }
    // `up` is Prometheus's own, about each scrape.
    known.set('up', 'gauge');
    const queries = [
      ...groups.flatMap((group) =>
        group.rules.map((rule) => ({ from: rule.alert, expr: rule.expr })),
      ),
      ...dashboards.flatMap(({ file, dashboard }) =>
        dashboard.panels.flatMap((panel) =>
          (panel.targets ?? []).map((target) => ({
            from: `${file}: ${panel.title}`,
            expr: target.expr,
          })),
        ),
      ),
    ];
    const missing = queries.flatMap(({ from, expr }) =>
      metricNames(expr)
        .filter((name) => !exported(name, known))
        .map((name) => `${from}: ${name}`),
    );
    expect(missing).toEqual([]);
  });
});
