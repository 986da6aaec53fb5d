import { SecretCipher } from '@switchyard/security';
import { startApp, type AppProcess } from '@switchyard/testing';
import { Agent, request } from 'undici';
import { edgeRouting } from '../lib/edge-turns.js';
import { benchEnvironment } from '../lib/environment.js';
import { cpuSeconds, load, peakMemoryMiB } from '../lib/measure.js';
import { seedChannel, seedToken } from '../lib/seed.js';

// How the edge's cost grows with the work (docs/performance.md, "How cost grows"), each
// figure against the smallest case of its curve, in one run:
// - body size: prompts of 1 KB to 1 MB, non-streamed, answered in a short sentence, through a
//   channel and token with limits (everything on): the edge's CPU per request and per KB of
//   prompt, and its peak resident memory after each size (a high-water mark, so it only
//   grows);
// - connections: 1, 64 and 1,024 at once (wrk), a short prompt: requests a second, p50,
//   p99 and the edge's CPU per request.
// The mock upstream and the load share CPU 0, the edge, router and metering CPU 1, as in the
// gateway benchmark. The body curve's load is an undici client at 8 connections (wrk takes
// its body from the environment, which holds no megabyte); its figure is the edge's CPU
// from /proc, which does not depend on the client's speed.
//
//   node bench/dist/benchmarks/growth.js     (BENCH_SECONDS per case, default 5)

const LOAD_CPU = '0';
const GATEWAY_CPU = '1';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const UPSTREAM_KEY = 'sk-bench-upstream';
const MODEL = 'gpt-4o-mini';
const BODY_BYTES = [1_000, 10_000, 100_000, 1_000_000];
const BODY_CONNECTIONS = 8;
const CONNECTIONS = [1, 64, 1_024];

function chatBody(promptBytes: number): string {
  const sentence = 'The quick brown fox jumps over the lazy dog, and then it rests. ';
  const prompt = sentence.repeat(Math.ceil(promptBytes / sentence.length)).slice(0, promptBytes);
  return JSON.stringify({
    model: MODEL,
    max_tokens: 16,
    messages: [{ role: 'user', content: prompt }],
  });
}

/** Sends `body` for SECONDS over `connections` keep-alive connections; requests answered 200. */
async function undiciLoad(url: string, token: string, body: string): Promise<number> {
  const agent = new Agent({ connections: BODY_CONNECTIONS, pipelining: 1 });
  const deadline = Date.now() + SECONDS * 1000;
  let served = 0;
  let failed = 0;
  const worker = async () => {
    while (Date.now() < deadline) {
      const response = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      });
      await response.body.dump();
      if (response.statusCode === 200) served += 1;
      else failed += 1;
    }
  };
  try {
    await Promise.all(Array.from({ length: BODY_CONNECTIONS }, worker));
  } finally {
    await agent.close();
  }
  if (failed > 0) throw new Error(`${failed} requests failed`);
  return served;
}

async function main(): Promise<void> {
  const bench = await benchEnvironment();
  const { env } = bench;
  const apps: AppProcess[] = [];
  try {
    const mock = await startApp('mock-upstream', {
      env: { ...env, MOCK_ACCOUNTS: UPSTREAM_KEY },
      cpus: LOAD_CPU,
    });
    apps.push(mock);
    // A short answer whatever the prompt (the mock echoes it otherwise), so the curve is the
    // prompt's cost alone.
    const fault = await fetch(`${mock.url}/_mock/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: UPSTREAM_KEY, reply: 'A short answer.' }),
    });
    if (!fault.ok) throw new Error(`mock fault: ${fault.status} ${await fault.text()}`);
    // Limits far above the load: every request takes the Redis round trip, none is refused.
    await seedChannel(bench.databaseUrl, new SecretCipher([bench.secretKeys]), {
      name: 'limited',
      provider: 'openai',
      baseUrl: mock.url,
      models: [MODEL],
      key: UPSTREAM_KEY,
      limits: { rpm: 100_000_000, tpm: 2_000_000_000, concurrency: 100_000 },
    });
    const token = await seedToken(bench.databaseUrl, {
      name: 'limited',
      limits: { quota: 1_000_000_000_000, rateLimit: 100_000_000 },
    });
    apps.push(await startApp('router', { env, cpus: GATEWAY_CPU }));
    apps.push(
      await startApp('metering', {
        env,
        cpus: GATEWAY_CPU,
        nodeFlags: ['--max-semi-space-size=64'],
      }),
    );
    const edge = await startApp('edge', {
      env,
      cpus: GATEWAY_CPU,
      readyPath: '/readyz',
      nodeFlags: ['--max-semi-space-size=16', '--heap-growing-percent=100'],
    });
    apps.push(edge);
    await edgeRouting(edge, token, 'edge routing');
    const url = `${edge.url}/v1/chat/completions`;
    const pid = edge.child.pid!;
    const lines: string[] = [];

    lines.push(
      `body size (non-streamed, ${BODY_CONNECTIONS} connections, ${SECONDS} s each, after a warm-up):`,
      'prompt     req/s   edge µs/req  edge µs/KB   vs 1 KB (per req)  edge peak MiB',
    );
    let smallest = 0;
    for (const bytes of BODY_BYTES) {
      const body = chatBody(bytes);
      await undiciLoad(url, token, body);
      const before = await cpuSeconds(pid);
      const served = await undiciLoad(url, token, body);
      const perRequest = (((await cpuSeconds(pid)) - before) / served) * 1e6;
      smallest ||= perRequest;
      lines.push(
        [
          `${bytes / 1000} KB`.padEnd(9),
          (served / SECONDS).toFixed(0).padStart(7),
          perRequest.toFixed(0).padStart(13),
          (perRequest / (bytes / 1000)).toFixed(1).padStart(11),
          `${(perRequest / smallest).toFixed(2)}x`.padStart(19),
          (await peakMemoryMiB(pid)).toFixed(0).padStart(15),
        ].join(' '),
      );
    }

    lines.push(
      '',
      `connections (a 1 KB prompt, non-streamed, wrk, ${SECONDS} s each, after a warm-up):`,
      'conns      req/s   p50 ms    p99 ms  edge µs/req  errors',
    );
    const small = chatBody(1_000);
    for (const connections of CONNECTIONS) {
      const options = {
        url,
        authorization: `Bearer ${token}`,
        body: small,
        connections,
        seconds: SECONDS,
        cpus: LOAD_CPU,
      };
      await load({ ...options, seconds: 2 });
      const before = await cpuSeconds(pid);
      const result = await load(options);
      const cpu = (await cpuSeconds(pid)) - before;
      // A window too short for its connections to get an answer serves none.
      const perRequest = result.requests > 0 ? ((cpu / result.requests) * 1e6).toFixed(0) : '-';
      lines.push(
        [
          String(connections).padEnd(6),
          result.rps.toFixed(0).padStart(9),
          result.p50Ms.toFixed(2).padStart(8),
          result.p99Ms.toFixed(2).padStart(9),
          perRequest.padStart(12),
          String(result.errors).padStart(7),
        ].join(' '),
      );
    }
    process.stdout.write(`growth of the edge's cost\n${lines.join('\n')}\n`);
  } finally {
    await Promise.all(apps.map((app) => app.stop()));
    await bench.remove();
  }
}

await main();
