import path from 'node:path';
import { generateSecretKeySpec, SecretCipher } from '@switchyard/security';
import {
  createTestDatabase,
  repositoryRoot,
  startApp,
  waitFor,
  type AppProcess,
  type TestDatabase,
} from '@switchyard/testing';
import { combined, cpuSeconds, load, type LoadResult } from './measure.js';
import { seedChannel, seedToken } from './seed.js';

// Edges compared side by side (docs/performance.md, "Tracing"): each serves the same
// channel's one model; they take turns under wrk, the order turning each round so neither
// always runs first, and each edge's CPU per request is its own, from /proc.

const UPSTREAM_KEY = 'sk-bench-upstream';

/** Waits until the edge routes the bench channel's one model for the token. */
export async function edgeRouting(edge: AppProcess, token: string, what: string): Promise<void> {
  await waitFor(
    async () => {
      const response = await fetch(`${edge.url}/v1/models`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return ((await response.json()) as { data: unknown[] }).data.length === 1 || undefined;
    },
    { timeoutMs: 20_000, what },
  );
}

/**
 * A chat completion asking for a few words, JSON or streamed with its usage; with
 * `promptBytes`, a prompt padded to about that size, which the mock echoes back, so the
 * answer is as long.
 */
export function chatBody(stream: boolean, promptBytes = 0): string {
  const ask = 'Say hello in a few words';
  return JSON.stringify({
    model: 'gpt-4o',
    stream,
    ...(stream ? { stream_options: { include_usage: true } } : {}),
    messages: [{ role: 'user', content: ask.padEnd(promptBytes, ' and a few more words') }],
  });
}

/** One edge's figures over its turns. */
export interface TurnsResult<Name extends string> {
  name: Name;
  edgeCpuUsPerRequest: number;
  /** CPU per request of each round, for pairing the edges round by round. */
  edgeCpuUsPerRound: number[];
}

/**
 * Measures the edges in turns (a warm-up of 2 seconds each, then `rounds` rounds of
 * `seconds` each), writes one JSON line per edge, naming it under `label`, and returns them.
 */
export async function edgesInTurns<Name extends string>(options: {
  edges: Record<Name, AppProcess>;
  label: string;
  token: string;
  stream: boolean;
  connections: number;
  rounds: number;
  seconds: number;
  /** The cores wrk runs on. */
  loadCpus: string;
  /** The prompt's size (and so the echoed answer's): a few words by default. */
  promptBytes?: number;
}): Promise<TurnsResult<Name>[]> {
  const { connections, stream } = options;
  const cases = (Object.entries(options.edges) as [Name, AppProcess][]).map(([name, edge]) => ({
    name,
    pid: edge.child.pid!,
    loads: [] as LoadResult[],
    cpu: 0,
    rounds: [] as number[],
    request: {
      url: `${edge.url}/v1/chat/completions`,
      authorization: `Bearer ${options.token}`,
      body: chatBody(stream, options.promptBytes),
      connections,
      cpus: options.loadCpus,
    },
  }));
  for (const measured of cases) await load({ ...measured.request, seconds: 2 });
  for (let round = 0; round < options.rounds; round++) {
    for (let turn = 0; turn < cases.length; turn++) {
      const measured = cases[(round + turn) % cases.length]!;
      const before = await cpuSeconds(measured.pid);
      const loaded = await load({ ...measured.request, seconds: options.seconds });
      const spent = (await cpuSeconds(measured.pid)) - before;
      measured.loads.push(loaded);
      measured.cpu += spent;
      measured.rounds.push(Math.round((spent / Math.max(1, loaded.requests)) * 1e6));
    }
  }
  return cases.map(({ name, loads, cpu, rounds }) => {
    const result = combined(loads);
    const edgeCpuUsPerRequest = Math.round((cpu / result.requests) * 1e6);
    process.stdout.write(
      `${JSON.stringify({
        kind: stream ? 'stream' : 'json',
        connections,
        [options.label]: name,
        rps: Math.round(result.rps),
        p50Ms: result.p50Ms,
        p99Ms: result.p99Ms,
        errors: result.errors,
        edgeCpuUsPerRequest,
        edgeCpuUsPerRound: rounds,
      })}\n`,
    );
    return { name, edgeCpuUsPerRequest, edgeCpuUsPerRound: rounds };
  });
}

/**
 * What the compared edges serve: the mock upstream on `cpus` (added to `apps`, to be
 * stopped), one channel of `gpt-4o` on it, and a token; returns the token.
 */
export async function benchChannel(options: {
  env: { DATABASE_URL: string; SECRET_KEYS: string } & Record<string, string>;
  cpus: string;
  apps: AppProcess[];
  /** Limits on the channel and the token far above the load, as the gateway benchmark's. */
  limited?: boolean;
  /** The channel's accounts, each one the mock knows: 1 by default, more for a relay's pool. */
  accounts?: number;
}): Promise<string> {
  const { env } = options;
  const keys =
    (options.accounts ?? 1) === 1
      ? [UPSTREAM_KEY]
      : Array.from({ length: options.accounts! }, (_, i) => `${UPSTREAM_KEY}-${i}`);
  const mock = await startApp('mock-upstream', {
    env: { ...env, MOCK_ACCOUNTS: keys.join(',') },
    cpus: options.cpus,
  });
  options.apps.push(mock);
  await seedChannel(env.DATABASE_URL, new SecretCipher([env.SECRET_KEYS]), {
    name: 'bench',
    provider: 'openai',
    baseUrl: mock.url,
    models: ['gpt-4o'],
    keys,
    ...(options.limited
      ? { limits: { rpm: 100_000_000, tpm: 2_000_000_000, concurrency: 100_000 } }
      : {}),
  });
  return seedToken(env.DATABASE_URL, {
    name: 'bench',
    ...(options.limited ? { limits: { quota: 1_000_000_000_000, rateLimit: 100_000_000 } } : {}),
  });
}

/**
 * The two built checkouts a comparison runs: BASELINE_ROOT's, and this one's (or
 * CANDIDATE_ROOT's). Without BASELINE_ROOT the benchmark says it is skipped and ends: `pnpm
 * bench` runs every benchmark, and this kind needs a second checkout.
 */
export function checkoutRoots(baseline: string): { before: string; after: string } {
  const baselineRoot = process.env.BASELINE_ROOT;
  if (!baselineRoot) {
    process.stdout.write(`skipped: BASELINE_ROOT names no built checkout (${baseline})\n`);
    process.exit(0);
  }
  return {
    before: path.resolve(baselineRoot),
    after: path.resolve(process.env.CANDIDATE_ROOT ?? repositoryRoot),
  };
}

/** A database of its own, and the environment every service of a comparison shares. */
export async function comparisonBase(): Promise<{
  database: TestDatabase;
  base: { DATABASE_URL: string; REDIS_URL: string; SECRET_KEYS: string; LOG_LEVEL: string };
}> {
  const database = await createTestDatabase();
  return {
    database,
    base: {
      DATABASE_URL: database.url,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      SECRET_KEYS: generateSecretKeySpec('bench'),
      LOG_LEVEL: 'info',
    },
  };
}
