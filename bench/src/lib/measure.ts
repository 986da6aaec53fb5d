import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { request as undiciRequest, Agent } from 'undici';

// Measuring tools: wrk for load (latency to the microsecond, unlike autocannon's whole
// milliseconds), a small undici client for time to first token, /proc for CPU and memory.

const run = promisify(execFile);

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Every error wrk counted: socket errors, `timeouts` and `statusErrors`. */
  errors: number;
  /**
   * Answers slower than wrk's timeout (2 s): counted among `requests`, but left out of the
   * latency percentiles.
   */
  timeouts: number;
  /** Answers with a status of 400 or above. */
  statusErrors: number;
}

const WRK_SCRIPT = `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = os.getenv("BENCH_AUTH")
wrk.body = os.getenv("BENCH_BODY")
for name, value in string.gmatch(os.getenv("BENCH_HEADERS") or "", "([^\\n:]+): ([^\\n]+)") do
  wrk.headers[name] = value
end
-- With a list of authorizations (BENCH_AUTH_FILE, one a line), each request takes one at
-- random; the requests are formatted once, so a pick costs wrk a table lookup.
local auth_file = os.getenv("BENCH_AUTH_FILE")
if auth_file then
  local formatted = {}
  init = function(args)
    for line in io.lines(auth_file) do
      wrk.headers["Authorization"] = line
      formatted[#formatted + 1] = wrk.format()
    end
    math.randomseed(tonumber(os.getenv("BENCH_SEED")))
  end
  request = function()
    return formatted[math.random(#formatted)]
  end
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nRESULT {"requests":%d,"micros":%d,"p50":%d,"p99":%d,"errors":%d,"timeouts":%d,"statusErrors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout, e.timeout, e.status))
end
`;

export async function load(options: {
  url: string;
  /** The Authorization header: the same on every request, or one of these at random for each. */
  authorization: string | string[];
  /** Extra request headers (a gateway's own routing headers). */
  headers?: Record<string, string>;
  body: string;
  connections: number;
  seconds: number;
  cpus: string;
}): Promise<LoadResult> {
  // A directory of the run's own: runs at once (other benchmarks on the machine) do not
  // overwrite each other's script or list.
  const directory = await mkdtemp(path.join(tmpdir(), 'switchyard-wrk-'));
  const script = path.join(directory, 'load.lua');
  const authorizations = path.join(directory, 'authorizations');
  const { authorization } = options;
  let stdout: string;
  try {
    await writeFile(script, WRK_SCRIPT);
    if (typeof authorization !== 'string')
      await writeFile(authorizations, `${authorization.join('\n')}\n`);
    ({ stdout } = await run(
      'taskset',
      [
        '-c',
        options.cpus,
        'wrk',
        '-t1',
        `-c${options.connections}`,
        `-d${options.seconds}s`,
        '--latency',
        '-s',
        script,
        options.url,
      ],
      {
        env: {
          ...process.env,
          // Each run draws its own sequence of authorizations, not its warm-up's again.
          ...(typeof authorization === 'string'
            ? { BENCH_AUTH: authorization }
            : { BENCH_AUTH_FILE: authorizations, BENCH_SEED: String(randomInt(2 ** 31)) }),
          BENCH_BODY: options.body,
          BENCH_HEADERS: Object.entries(options.headers ?? {})
            .map(([name, value]) => `${name}: ${value}`)
            .join('\n'),
        },
        maxBuffer: 1 << 20,
      },
    ));
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
  const line = stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`wrk printed no result:\n${stdout}`);
  const raw = JSON.parse(line.slice(7)) as {
    requests: number;
    micros: number;
    p50: number;
    p99: number;
    errors: number;
    timeouts: number;
    statusErrors: number;
  };
  const seconds = raw.micros / 1e6;
  return {
    requests: raw.requests,
    seconds,
    rps: raw.requests / seconds,
    p50Ms: raw.p50 / 1000,
    p99Ms: raw.p99 / 1000,
    errors: raw.errors,
    timeouts: raw.timeouts,
    statusErrors: raw.statusErrors,
  };
}

/**
 * Short loads of one case, taken in turns with other cases, as one result: requests,
 * seconds and errors summed; the latency percentiles, which do not add up, as the median
 * of the loads'.
 */
export function combined(loads: LoadResult[]): LoadResult {
  const sum = (value: (load: LoadResult) => number) => loads.reduce((a, l) => a + value(l), 0);
  const median = (value: (load: LoadResult) => number) => {
    const sorted = loads.map(value).sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  const requests = sum((l) => l.requests);
  const seconds = sum((l) => l.seconds);
  return {
    requests,
    seconds,
    rps: requests / seconds,
    p50Ms: median((l) => l.p50Ms),
    p99Ms: median((l) => l.p99Ms),
    errors: sum((l) => l.errors),
    timeouts: sum((l) => l.timeouts),
    statusErrors: sum((l) => l.statusErrors),
  };
}

export interface FirstTokenResult {
  samples: number;
  p50Ms: number;
  p99Ms: number;
}

/** Time from sending a streaming request to the first chunk of its body. */
export async function timeToFirstToken(options: {
  url: string;
  authorization: string;
  headers?: Record<string, string>;
  body: string;
  connections: number;
  seconds: number;
}): Promise<FirstTokenResult> {
  const agent = new Agent({ connections: options.connections, keepAliveTimeout: 30_000 });
  const samples: number[] = [];
  const deadline = performance.now() + options.seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const started = performance.now();
      const response = await undiciRequest(options.url, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'content-type': 'application/json',
          authorization: options.authorization,
          ...options.headers,
        },
        body: options.body,
      });
      let first = true;
      for await (const _chunk of response.body) {
        if (first) samples.push(performance.now() - started);
        first = false;
      }
    }
  };
  await Promise.all(Array.from({ length: options.connections }, worker));
  await agent.close();
  samples.sort((a, b) => a - b);
  const at = (q: number) =>
    samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? NaN;
  return { samples: samples.length, p50Ms: at(0.5), p99Ms: at(0.99) };
}

/** CPU seconds a process has used so far, in user space and in the kernel. */
export async function cpuTimes(pid: number): Promise<{ user: number; system: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which may contain spaces, closed by the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

/** CPU seconds (user + system) a process has used so far. */
export async function cpuSeconds(pid: number): Promise<number> {
  const { user, system } = await cpuTimes(pid);
  return user + system;
}

/** The pids of every process with this name (`pgrep -x`), e.g. all of Postgres's. */
export async function pidsOf(name: string): Promise<number[]> {
  const { stdout } = await run('pgrep', ['-x', name]).catch(() => ({ stdout: '' }));
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map(Number);
}

/** A memory figure of /proc/<pid>/status, in MiB. */
async function statusMiB(pid: number, field: 'VmHWM' | 'VmRSS'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match ? Number(match[1]) / 1024 : NaN;
}

/** Peak resident memory of a process, in MiB (VmHWM). */
export function peakMemoryMiB(pid: number): Promise<number> {
  return statusMiB(pid, 'VmHWM');
}

/** Resident memory of a process now, in MiB (VmRSS). */
export function residentMemoryMiB(pid: number): Promise<number> {
  return statusMiB(pid, 'VmRSS');
}
