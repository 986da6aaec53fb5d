import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

// The top frames of a V8 CPU profile (`node --cpu-prof`), by self time, as a share of the
// process's busy time (idle excluded), and the same time grouped by where the code comes
// from (a package, Node's internals, an app or lib of this repository, the collector). Then
// this repository's own functions by total time, what they ran themselves and all they
// called (Node's, a package's), which is what a step of the hot path costs.
//
//   node bench/dist/lib/profile-top.js <file.cpuprofile | directory (its newest)> [frames] [last seconds]
//
// With `last seconds`, only the samples of the profile's last seconds are read: a profile
// of a whole benchmark run starts with the process loading its modules.

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function newest(target: string): string {
  if (!statSync(target).isDirectory()) return target;
  const files = readdirSync(target)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => path.join(target, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (!files[0]) throw new Error(`no .cpuprofile in ${target}`);
  return files[0];
}

/** Where a frame's code comes from. */
export function originOf(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  if (url.startsWith('node:')) return 'node';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const own = /\/(apps|libs)\/([^/]+)\//.exec(url);
  return own ? `${own[1]}/${own[2]}` : url;
}

const file = newest(process.argv[2] ?? '.');
const top = Number(process.argv[3] ?? 25);
const lastMicros = Number(process.argv[4] ?? Infinity) * 1e6;
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const span = profile.timeDeltas.reduce((a, b) => a + b, 0);
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfMicros = new Map<number, number>();
let at = 0;
profile.samples.forEach((id, index) => {
  const delta = profile.timeDeltas[index] ?? 0;
  at += delta;
  if (span - at > lastMicros) return;
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + delta);
});
const callerOf = new Map<number, number>();
for (const node of profile.nodes)
  for (const child of node.children ?? []) callerOf.set(child, node.id);

function frameOf(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url
    ? `${url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(apps|libs)\//, '$1/')}:${lineNumber + 1}`
    : '';
  return `${functionName || '(anonymous)'} ${where}`;
}

const frames = new Map<string, number>();
const origins = new Map<string, number>();
/** Own functions' total time: a sample counts once for each function on its stack. */
const totals = new Map<string, number>();
let busy = 0;
for (const [id, micros] of selfMicros) {
  const node = byId.get(id)!;
  const { functionName, url } = node.callFrame;
  if (functionName === '(idle)') continue;
  busy += micros;
  const key = frameOf(node);
  frames.set(key, (frames.get(key) ?? 0) + micros);
  const origin = originOf(url, functionName);
  origins.set(origin, (origins.get(origin) ?? 0) + micros);
  const onStack = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = callerOf.get(at)) {
    const caller = byId.get(at)!;
    if (/^(apps|libs)\//.test(originOf(caller.callFrame.url, caller.callFrame.functionName)))
      onStack.add(frameOf(caller));
  }
  for (const frame of onStack) totals.set(frame, (totals.get(frame) ?? 0) + micros);
}
const share = (micros: number) => `${((micros / busy) * 100).toFixed(1).padStart(5)} %`;
process.stdout.write(`${file}: ${(busy / 1e6).toFixed(2)} s busy\n\nby origin:\n`);
for (const [origin, micros] of [...origins].sort((a, b) => b[1] - a[1]).slice(0, 20))
  process.stdout.write(`${share(micros)}  ${origin}\n`);
process.stdout.write(`\ntop frames by self time:\n`);
for (const [key, micros] of [...frames].sort((a, b) => b[1] - a[1]).slice(0, top))
  process.stdout.write(`${share(micros)}  ${key}\n`);
process.stdout.write(`\nthis repository's functions by total time:\n`);
for (const [key, micros] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top))
  process.stdout.write(`${share(micros)}  ${key}\n`);
