import { execFile } from 'node:child_process';
import { AsyncLocalStorage } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

// What a request context (an AsyncLocalStorage entered per request, as libs/service does
// for apps with `requestContext` on) costs per request, counted in CPU instructions by
// valgrind's callgrind: the same count for the same Node whatever else the machine is
// doing, where CPU time on a shared machine moves by ±20 % between runs. A "request" is an
// async function with ten awaits, the shape of the edge's handling. The edge and the
// metering worker keep the context off while it costs more than nothing
// (docs/performance.md); run this with a newer Node to see whether it still does.
//
//   node bench/dist/benchmarks/request-context.js          (needs valgrind)

const REQUESTS = 20_000;
const AWAITS = 10;

async function step(value: number): Promise<number> {
  await Promise.resolve();
  return value + 1;
}

async function handle(value: number): Promise<number> {
  let result = value;
  for (let i = 0; i < AWAITS; i += 1) result = await step(result);
  return result;
}

/** The measured program: REQUESTS requests, each in its own context or none. */
async function requests(withContext: boolean): Promise<void> {
  const storage = new AsyncLocalStorage<{ requestId: string }>();
  let total = 0;
  for (let i = 0; i < REQUESTS; i += 1) {
    total += withContext
      ? await storage.run({ requestId: String(i) }, () => handle(i))
      : await handle(i);
  }
  if (total === 0) throw new Error('unreachable');
}

async function instructions(mode: 'none' | 'context' | 'idle'): Promise<number> {
  const { stderr } = await promisify(execFile)('valgrind', [
    '--tool=callgrind',
    '--callgrind-out-file=/dev/null',
    process.execPath,
    fileURLToPath(import.meta.url),
    mode,
  ]);
  const match = /Collected : (\d+)/.exec(stderr);
  if (!match) throw new Error(`callgrind printed no count:\n${stderr}`);
  return Number(match[1]);
}

const mode = process.argv[2];
if (mode === 'none' || mode === 'context') {
  await requests(mode === 'context');
} else if (mode !== 'idle') {
  const idle = await instructions('idle');
  const none = await instructions('none');
  const context = await instructions('context');
  const perRequest = (count: number) => Math.round((count - idle) / REQUESTS);
  process.stdout.write(
    [
      `request context on node ${process.version}: instructions per request (${AWAITS} awaits)`,
      `without a context: ${perRequest(none).toLocaleString('en-US')}`,
      `in a context:      ${perRequest(context).toLocaleString('en-US')} (+${(perRequest(context) - perRequest(none)).toLocaleString('en-US')})`,
      '',
    ].join('\n'),
  );
}
