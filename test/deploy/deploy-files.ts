import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

// Readers for what `deploy/` holds: Kubernetes manifests (the fields the checks use),
// the Dockerfile and the nginx configuration.

export const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const deployDirectory = path.join(repositoryRoot, 'deploy');
export const kustomizeBase = path.join(deployDirectory, 'k8s', 'base');
export const dockerfilePath = path.join(deployDirectory, 'docker', 'Dockerfile');
export const nginxConfigPath = path.join(deployDirectory, 'nginx', 'switchyard.conf');

// ---- Kubernetes ---------------------------------------------------------------------------

export interface Metadata {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: Metadata;
}

export interface KeyRef {
  name: string;
  key: string;
  optional?: boolean;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { configMapKeyRef?: KeyRef; secretKeyRef?: KeyRef };
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name: string; optional?: boolean };
  secretRef?: { name: string; optional?: boolean };
}

export interface Probe {
  httpGet?: { path: string; port: number | string };
  periodSeconds?: number;
  failureThreshold?: number;
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: {
    preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } };
  };
  resources?: {
    requests?: Record<string, string | number>;
    limits?: Record<string, string | number>;
  };
  securityContext?: SecurityContext;
  volumeMounts?: { name: string; mountPath: string }[];
}

export interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  runAsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[] };
  seccompProfile?: { type: string };
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: SecurityContext;
  terminationGracePeriodSeconds?: number;
  enableServiceLinks?: boolean;
  automountServiceAccountToken?: boolean;
  restartPolicy?: string;
  volumes?: { name: string; emptyDir?: Record<string, unknown> }[];
}

export interface PodTemplate {
  metadata: Metadata;
  spec: PodSpec;
}

export interface Deployment extends KubeObject {
  kind: 'Deployment';
  spec: {
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: PodTemplate;
  };
}

export interface Service extends KubeObject {
  kind: 'Service';
  spec: {
    selector: Record<string, string>;
    ports: { name?: string; port: number; targetPort?: number | string }[];
  };
}

export interface Job extends KubeObject {
  kind: 'Job';
  spec: { template: PodTemplate };
}

export interface HorizontalPodAutoscaler extends KubeObject {
  kind: 'HorizontalPodAutoscaler';
  spec: {
    scaleTargetRef: { apiVersion: string; kind: string; name: string };
    minReplicas?: number;
    maxReplicas: number;
    metrics?: {
      type: string;
      resource?: { name: string; target: { type: string; averageUtilization?: number } };
    }[];
  };
}

export interface ConfigMap extends KubeObject {
  kind: 'ConfigMap';
  data?: Record<string, string>;
}

export interface Secret extends KubeObject {
  kind: 'Secret';
  stringData?: Record<string, string>;
  data?: Record<string, string>;
}

export interface Kustomization {
  apiVersion: string;
  kind: 'Kustomization';
  resources?: string[];
  images?: { name: string; newName?: string; newTag?: string }[];
}

export interface ManifestFile {
  file: string;
  documents: KubeObject[];
  /** Parse errors and warnings, one line each. */
  problems: string[];
}

/** Every `.yaml`/`.yml` file of the kustomize base, parsed (all documents of each). */
export function readKustomizeBase(): ManifestFile[] {
  return readdirSync(kustomizeBase)
    .filter((file) => /\.ya?ml$/.test(file))
    .sort()
    .map((file) => {
      const text = readFileSync(path.join(kustomizeBase, file), 'utf8');
      const parsed = parseAllDocuments(text);
      const documents = Array.isArray(parsed) ? parsed : [parsed];
      const problems = documents.flatMap((document) =>
        [...document.errors, ...document.warnings].map((problem) => problem.message),
      );
      return {
        file,
        documents: documents
          .map((document) => document.toJS() as KubeObject | null)
          .filter((document): document is KubeObject => document !== null),
        problems,
      };
    });
}

export function isKind<K extends KubeObject>(kind: K['kind']) {
  return (object: KubeObject): object is K => object.kind === kind;
}

/** The container port a probe or Service port names (by number or by port name). */
export function resolvePort(container: Container, port: number | string | undefined): number {
  if (typeof port === 'number') return port;
  const named = container.ports?.find((candidate) => candidate.name === port);
  if (!named) throw new Error(`container ${container.name} has no port named ${String(port)}`);
  return named.containerPort;
}

/** A Kubernetes quantity (`250m`, `1`, `512Mi`, `1Gi`) as a plain number. */
export function parseQuantity(quantity: string | number): number {
  if (typeof quantity === 'number') return quantity;
  const match = /^(\d+(?:\.\d+)?)(m|k|M|G|Ki|Mi|Gi)?$/.exec(quantity);
  if (!match) throw new Error(`not a quantity: ${quantity}`);
  const factor: Record<string, number> = {
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
  };
  return Number(match[1]) * (match[2] ? (factor[match[2]] ?? Number.NaN) : 1);
}

// ---- Dockerfile ----------------------------------------------------------------------------

export interface Instruction {
  keyword: string;
  args: string;
}

export interface DockerStage {
  image: string;
  name?: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  globalArgs: Record<string, string>;
  stages: DockerStage[];
}

/** Instructions by stage, with continuation lines joined and comments dropped. */
export function parseDockerfile(text: string): Dockerfile {
  const logical: string[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    logical.push(`${pending}${line}`.trim());
    pending = '';
  }
  const dockerfile: Dockerfile = { globalArgs: {}, stages: [] };
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    const upper = keyword.toUpperCase();
    const stage = dockerfile.stages.at(-1);
    if (upper === 'FROM') {
      const [image = '', as, name] = args.split(/\s+/).filter((part) => !part.startsWith('--'));
      dockerfile.stages.push({
        image: substitute(image, dockerfile.globalArgs),
        name: as?.toUpperCase() === 'AS' ? name : undefined,
        instructions: [],
      });
    } else if (!stage && upper === 'ARG') {
      const [name = '', value = ''] = args.split('=');
      dockerfile.globalArgs[name] = value;
    } else if (stage) {
      stage.instructions.push({ keyword: upper, args });
    }
  }
  return dockerfile;
}

function substitute(text: string, variables: Record<string, string>): string {
  return text.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, braced?: string, bare?: string) => {
    const name = braced ?? bare ?? '';
    return variables[name] ?? whole;
  });
}

// ---- nginx -------------------------------------------------------------------------------

export interface NginxDirective {
  name: string;
  args: string[];
  /** Enclosing blocks, outermost first, e.g. ['server', 'location /']. */
  context: string[];
  /** The directives of its block, for block directives (map, server, location). */
  block?: NginxDirective[];
}

/** A small parser for nginx configuration: enough for directives, blocks and comments. */
export function parseNginx(text: string): NginxDirective[] {
  const tokens: string[] = [];
  const pattern = /#[^\n]*|'([^']*)'|"([^"]*)"|([{};])|([^\s{};'"#]+)/g;
  for (const match of text.matchAll(pattern)) {
    if (match[0].startsWith('#')) continue;
    tokens.push(match[1] ?? match[2] ?? match[3] ?? match[4] ?? '');
  }
  let position = 0;
  const parseBlock = (context: string[]): NginxDirective[] => {
    const directives: NginxDirective[] = [];
    while (position < tokens.length) {
      const words: string[] = [];
      while (position < tokens.length && !['{', '}', ';'].includes(tokens[position] ?? '')) {
        words.push(tokens[position++] ?? '');
      }
      const end = tokens[position++];
      if (end === '}' || end === undefined) {
        if (words.length > 0) throw new Error(`unterminated directive: ${words.join(' ')}`);
        return directives;
      }
      const [name = '', ...args] = words;
      if (end === ';') {
        directives.push({ name, args, context });
      } else {
        const label = [name, ...args].join(' ');
        directives.push({ name, args, context, block: parseBlock([...context, label]) });
      }
    }
    return directives;
  };
  return parseBlock([]);
}

export function flattenNginx(directives: NginxDirective[]): NginxDirective[] {
  return directives.flatMap((directive) => [directive, ...flattenNginx(directive.block ?? [])]);
}
