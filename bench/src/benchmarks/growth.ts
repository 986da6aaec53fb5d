import { type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { SecretCipher } from '@switchyard/security';
import { query, startApp, type AppProcess } from '@switchyard/testing';
import { Agent, request } from 'undici';
import { startDeployedEdge, startDeployedMetering } from '../lib/deployed.js';
import { edgeRouting } from '../lib/edge-turns.js';
import { benchEnvironment } from '../lib/environment.js';
import { startFloor } from '../lib/floors.js';
import { cpuSeconds, load, peakMemoryMiB, type LoadResult } from '../lib/measure.js';
import { seedChannel, seedToken } from '../lib/seed.js';

// How the edge's cost grows with the work (docs/performance.md, "How cost grows"), each
// figure against the smallest case of its curve, in one run:
// - body size: prompts of 1 KB to 1 MB, non-streamed, answered in a short sentence, through a
//   channel and token with limits (everything on): the edge's CPU per request and per KB of
//   prompt, and its peak resident memory after each size (a high-water mark, so it only
//   grows);
// - connections: 1, 64 and 1,024 at once (wrk), a short prompt: requests a second, p50,
//   p99 and the edge's CPU per request, and beside them the same figures of the floor
//   (bench/src/lib/bare-proxy.ts over Node's own client, the cheaper of its two for JSON in
//   docs/performance.md, "Against the floor"), pinned as the edge is, so a drop at 1,024
//   can be told to be Node's or the edge's; wrk's errors split into timeouts (answers
//   slower than 2 s) and statuses of 400 or above, the rest being socket errors;
// - streams: answers of 300, 3,000 and 30,000 server-sent events (the mock sends its answer
//   a word an event), at 64 connections: the edge's CPU per request, per event and per KB
//   of answer, and its peak resident memory over each case alone (the high-water mark
//   started again from the resident memory before each): whether memory per stream in
//   flight is bounded;
// - tokens: 1, 1,000 and 1,000,000 in the database, each request with one drawn at random
//   from 10,000 of them (from all of them when fewer), at 64 connections: the edge's CPU
//   per request, its token cache's hit ratio over the window and the lookups that waited
//   for Postgres (`edge_token_lookups_total`). The warm-up sends one request with each
//   token drawn, so the window measures the steady state: a cache holding every token in
//   use, missing only as its entries expire (each about every ten minutes). Then, with
//   every token seeded, the three draws take turns on the same edge for a few rounds: the
//   cases one after the other differ by the machine's drift as much as by the draw.
// The mock upstream and the load share CPU 0, the edge, router and metering CPU 1, as in the
// gateway benchmark. The body and stream curves' load is an undici client (wrk takes its
// body from the environment, which holds no megabyte, and would end a window in the middle
// of long streams); every request it starts ends inside the window, so the edge's CPU from
// /proc over the window is exactly its requests', whatever the client's speed.
//
//   node bench/dist/benchmarks/growth.js     (BENCH_SECONDS per case, default 5)
//   BENCH_CURVES=tokens node bench/dist/benchmarks/growth.js   (some of the curves)

const LOAD_CPU = '0';
const GATEWAY_CPU = '1';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const UPSTREAM_KEY = 'sk-bench-upstream';
const MODEL = 'gpt-4o-mini';
const BODY_BYTES = [1_000, 10_000, 100_000, 1_000_000];
const BODY_CONNECTIONS = 8;
const CONNECTIONS = [1, 64, 1_024];
const STREAM_EVENTS = [300, 3_000, 30_000];
/** As the gateway benchmark's streams (docs/performance.md, "Against the floor"). */
const STREAM_CONNECTIONS = 64;
/** The events of a streamed answer besides its words: the role, the stop, the usage, `[DONE]`. */
const STREAM_FRAME_EVENTS = 4;
const TOKENS = [1, 1_000, 1_000_000];
/** Which curves to run: all by default, or a comma-separated subset (BENCH_CURVES). */
const CURVES = new Set(
  (process.env.BENCH_CURVES ?? 'bodies,connections,streams,tokens').split(','),
);
const TOKENS_IN_LOAD = 10_000;
/** Rounds of the draws taking turns on one edge, after the curve. */
const TOKEN_ROUNDS = 5;
const TOKEN_CONNECTIONS = 64;
const SHORT_REPLY = 'A short answer.';
const LIMITS = { quota: 1_000_000_000_000, rateLimit: 100_000_000 };

function chatBody(promptBytes: number): string {
  const sentence = 'The quick brown fox jumps over the lazy dog, and then it rests. ';
  const prompt = sentence.repeat(Math.ceil(promptBytes / sentence.length)).slice(0, promptBytes);
  return JSON.stringify({
    model: MODEL,
    max_tokens: 16,
    messages: [{ role: 'user', content: prompt }],
  });
}

const STREAM_BODY = JSON.stringify({
  model: MODEL,
  stream: true,
  stream_options: { include_usage: true },
  messages: [{ role: 'user', content: 'Tell me a long story.' }],
});

/** What the mock answers every request on the bench's key with from now on. */
async function mockReply(mock: AppProcess, reply: string): Promise<void> {
  const cleared = await fetch(`${mock.url}/_mock/faults`, { method: 'DELETE' });
  if (!cleared.ok) throw new Error(`mock faults: ${cleared.status}`);
  const fault = await fetch(`${mock.url}/_mock/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key: UPSTREAM_KEY, reply }),
  });
  if (!fault.ok) throw new Error(`mock fault: ${fault.status} ${await fault.text()}`);
}

/**
 * Sends `body` over `connections` keep-alive connections, each starting requests until
 * SECONDS have passed, and waits for every answer to end; requests answered 200.
 */
async function undiciLoad(
  url: string,
  token: string,
  body: string,
  connections: number,
): Promise<{ served: number; seconds: number }> {
  const agent = new Agent({ connections, pipelining: 1 });
  const started = Date.now();
  const deadline = started + SECONDS * 1000;
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
      // Read to the end: `dump()` would cut a long stream short.
      for await (const _chunk of response.body);
      if (response.statusCode === 200) served += 1;
      else failed += 1;
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    await agent.close();
  }
  if (failed > 0) throw new Error(`${failed} requests failed`);
  return { served, seconds: (Date.now() - started) / 1000 };
}

/** One request with each authorization, `connections` at a time; each must be answered 200. */
async function touchEach(
  url: string,
  authorizations: string[],
  body: string,
  connections: number,
): Promise<void> {
  const agent = new Agent({ connections, pipelining: 1 });
  let next = 0;
  const worker = async () => {
    while (next < authorizations.length) {
      const authorization = authorizations[next++]!;
      const response = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization, 'content-type': 'application/json' },
        body,
      });
      const text = await response.body.text();
      if (response.statusCode !== 200) throw new Error(`warm-up: ${response.statusCode} ${text}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    await agent.close();
  }
}

/** One streamed answer, read whole: its size in bytes and its events. */
async function streamProbe(url: string, token: string): Promise<{ bytes: number; events: number }> {
  const response = await request(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: STREAM_BODY,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`stream: ${response.statusCode} ${text}`);
  return {
    bytes: Buffer.byteLength(text),
    events: text.split('\n\n').filter((event) => event.startsWith('data: ')).length,
  };
}

/**
 * Waits (10 s at most) until the process spends under a tenth of its core: a warm-up's
 * requests left in flight when wrk stopped are then not counted in the next window.
 */
async function idle(pid: number): Promise<void> {
  for (let tries = 0; tries < 40; tries++) {
    const before = await cpuSeconds(pid);
    await sleep(250);
    if ((await cpuSeconds(pid)) - before < 0.025) return;
  }
}

/** Starts the process's peak resident memory (VmHWM) again from its resident memory now. */
async function resetPeakMemory(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
}

/**
 * Bulk token number `n`: `sk-` and 48 letters and digits, as `generateGatewayToken` shapes
 * them; `seedBulkTokens` builds the same in SQL.
 */
function bulkToken(n: number): string {
  return `sk-growth${String(n).padStart(42, '0')}`;
}

/** Tokens from..to in one statement, hashed as the edge looks them up (sha256 hex). */
async function seedBulkTokens(databaseUrl: string, from: number, to: number): Promise<void> {
  await query(
    databaseUrl,
    `INSERT INTO "Token" (name, "keyHash", "lastFour", quota, "rateLimit", "updatedAt")
     SELECT 'growth', encode(sha256(convert_to(secret, 'UTF8')), 'hex'), right(secret, 4), $3, $4, now()
       FROM (SELECT 'sk-growth' || lpad(n::text, 42, '0') AS secret
               FROM generate_series($1::int, $2::int) AS n) AS secrets`,
    [from, to, LIMITS.quota, LIMITS.rateLimit],
  );
  // As autovacuum would have by the time a deployment holds this many.
  await query(databaseUrl, 'ANALYZE "Token"');
}

/** The edge's token lookups so far, by result. */
async function tokenLookups(edge: AppProcess): Promise<Record<string, number>> {
  const metrics = await (await fetch(`${edge.opsUrl}/metrics`)).text();
  return Object.fromEntries(
    [...metrics.matchAll(/^edge_token_lookups_total\{[^}]*result="(\w+)"[^}]*\} (\d+)/gm)].map(
      ([, result, value]) => [result!, Number(value)],
    ),
  );
}

/** The connections curve's columns for one target: titles, and wrk's figures. */
const LOAD_WIDTHS = [9, 8, 9, 12, 7, 9, 8];

function loadTitles(cpu: string): string[] {
  return ['req/s', 'p50 ms', 'p99 ms', cpu, 'errors', 'timeouts', '4xx/5xx'].map((title, i) =>
    title.padStart(LOAD_WIDTHS[i]!),
  );
}

function loadCells(result: LoadResult, cpuMicros: string): string[] {
  return [
    result.rps.toFixed(0),
    result.p50Ms.toFixed(2),
    result.p99Ms.toFixed(2),
    cpuMicros,
    String(result.errors),
    String(result.timeouts),
    String(result.statusErrors),
  ].map((cell, i) => cell.padStart(LOAD_WIDTHS[i]!));
}

async function main(): Promise<void> {
  const bench = await benchEnvironment();
  const { env } = bench;
  const apps: AppProcess[] = [];
  let floor: ChildProcess | undefined;
  try {
    const mock = await startApp('mock-upstream', {
      env: { ...env, MOCK_ACCOUNTS: UPSTREAM_KEY },
      cpus: LOAD_CPU,
    });
    apps.push(mock);
    // A short answer whatever the prompt (the mock echoes it otherwise), so the curve is the
    // prompt's cost alone.
    await mockReply(mock, SHORT_REPLY);
    // Limits far above the load: every request takes the Redis round trip, none is refused.
    await seedChannel(bench.databaseUrl, new SecretCipher([bench.secretKeys]), {
      name: 'limited',
      provider: 'openai',
      baseUrl: mock.url,
      models: [MODEL],
      keys: [UPSTREAM_KEY],
      limits: { rpm: 100_000_000, tpm: 2_000_000_000, concurrency: 100_000 },
    });
    const token = await seedToken(bench.databaseUrl, { name: 'limited', limits: LIMITS });
    apps.push(await startApp('router', { env, cpus: GATEWAY_CPU }));
    apps.push(await startDeployedMetering(env, GATEWAY_CPU));
    const edge = await startDeployedEdge(env, GATEWAY_CPU);
    apps.push(edge);
    await edgeRouting(edge, token, 'edge routing');
    const url = `${edge.url}/v1/chat/completions`;
    const pid = edge.child.pid!;
    const lines: string[] = [];
    const small = chatBody(1_000);

    if (CURVES.has('bodies')) {
      lines.push(
        `body size (non-streamed, ${BODY_CONNECTIONS} connections, ${SECONDS} s each, after a warm-up):`,
        'prompt     req/s   edge µs/req  edge µs/KB   vs 1 KB (per req)  edge peak MiB',
      );
      let smallest = 0;
      for (const bytes of BODY_BYTES) {
        const body = chatBody(bytes);
        await undiciLoad(url, token, body, BODY_CONNECTIONS);
        const before = await cpuSeconds(pid);
        const { served, seconds } = await undiciLoad(url, token, body, BODY_CONNECTIONS);
        const perRequest = (((await cpuSeconds(pid)) - before) / served) * 1e6;
        smallest ||= perRequest;
        lines.push(
          [
            `${bytes / 1000} KB`.padEnd(9),
            (served / seconds).toFixed(0).padStart(7),
            perRequest.toFixed(0).padStart(13),
            (perRequest / (bytes / 1000)).toFixed(1).padStart(11),
            `${(perRequest / smallest).toFixed(2)}x`.padStart(19),
            (await peakMemoryMiB(pid)).toFixed(0).padStart(15),
          ].join(' '),
        );
      }
    }
    if (CURVES.has('connections')) {
      const floorServer = await startFloor('floor-pipe', mock.url, GATEWAY_CPU);
      floor = floorServer.child;
      lines.push(
        '',
        `connections (a 1 KB prompt, non-streamed, wrk, ${SECONDS} s each, after a warm-up; the floor beside the edge):`,
        [
          'conns'.padEnd(6),
          ...loadTitles('edge µs/req'),
          '| floor',
          ...loadTitles('floor µs/req'),
        ].join(' '),
      );
      // Each window's CPU per request, or '-' when a window too short for its connections to
      // get an answer served none.
      const measured = async (cpuOf: number, options: Parameters<typeof load>[0]) => {
        await load({ ...options, seconds: 2 });
        await idle(cpuOf);
        const before = await cpuSeconds(cpuOf);
        const result = await load(options);
        const cpu = (await cpuSeconds(cpuOf)) - before;
        return {
          result,
          perRequest: result.requests > 0 ? ((cpu / result.requests) * 1e6).toFixed(0) : '-',
        };
      };
      for (const connections of CONNECTIONS) {
        const common = { body: small, connections, seconds: SECONDS, cpus: LOAD_CPU };
        const ours = await measured(pid, { ...common, url, authorization: `Bearer ${token}` });
        const theirs = await measured(floor.pid!, {
          ...common,
          url: `${floorServer.url}/v1/chat/completions`,
          authorization: `Bearer ${UPSTREAM_KEY}`,
        });
        lines.push(
          [
            String(connections).padEnd(6),
            ...loadCells(ours.result, ours.perRequest),
            '|'.padEnd(7),
            ...loadCells(theirs.result, theirs.perRequest),
          ].join(' '),
        );
      }
      floor.kill();
      floor = undefined;
    }
    if (CURVES.has('streams')) {
      lines.push(
        '',
        `streams (streamed with their usage, ${STREAM_CONNECTIONS} connections, ${SECONDS} s each, after a warm-up):`,
        'events  answer KB    req/s  edge µs/req  µs/event  µs/KB  vs 300 (per KB)  edge peak MiB  above start',
      );
      let smallestPerKb = 0;
      for (const events of STREAM_EVENTS) {
        await mockReply(mock, 'word '.repeat(events - STREAM_FRAME_EVENTS).trim());
        const probe = await streamProbe(url, token);
        if (probe.events !== events)
          throw new Error(`a stream of ${probe.events} events, not ${events}`);
        await undiciLoad(url, token, STREAM_BODY, STREAM_CONNECTIONS);
        await resetPeakMemory(pid);
        const start = await peakMemoryMiB(pid);
        const before = await cpuSeconds(pid);
        const { served, seconds } = await undiciLoad(url, token, STREAM_BODY, STREAM_CONNECTIONS);
        const perRequest = (((await cpuSeconds(pid)) - before) / served) * 1e6;
        const peak = await peakMemoryMiB(pid);
        const perKb = perRequest / (probe.bytes / 1000);
        // The kernel's resident counts are approximate (a fraction of a MiB), so a peak may
        // read just under where it restarted: whole MiB, signed.
        const rise = Math.round(peak - start);
        smallestPerKb ||= perKb;
        lines.push(
          [
            String(events).padEnd(6),
            (probe.bytes / 1000).toFixed(0).padStart(10),
            (served / seconds).toFixed(0).padStart(8),
            perRequest.toFixed(0).padStart(12),
            (perRequest / events).toFixed(2).padStart(9),
            perKb.toFixed(1).padStart(6),
            `${(perKb / smallestPerKb).toFixed(2)}x`.padStart(16),
            peak.toFixed(0).padStart(14),
            `${rise >= 0 ? '+' : ''}${rise}`.padStart(12),
          ].join(' '),
        );
      }
      await mockReply(mock, SHORT_REPLY);
    }
    if (CURVES.has('tokens')) {
      lines.push(
        '',
        `tokens (a 1 KB prompt, non-streamed, wrk at ${TOKEN_CONNECTIONS} connections, a token drawn at random for each request, ${SECONDS} s each, after a warm-up):`,
        'in database  drawn from    req/s  edge µs/req  vs 1 token  hit ratio  cold lookups/s  µs/cold lookup  errors',
      );
      let smallestPerToken = 0;
      let seeded = 1;
      const drawSets: string[][] = [];
      const loadOf = (authorizations: string[]) => ({
        url,
        authorization: authorizations,
        body: small,
        connections: TOKEN_CONNECTIONS,
        seconds: SECONDS,
        cpus: LOAD_CPU,
      });
      for (const count of TOKENS) {
        if (count > seeded) await seedBulkTokens(bench.databaseUrl, seeded, count - 1);
        seeded = count;
        // The first token and bulk tokens 1..count-1; beyond TOKENS_IN_LOAD, bulk tokens spread
        // evenly over all of them.
        const drawn = Math.min(count, TOKENS_IN_LOAD);
        const step = Math.floor((count - 1) / (drawn - 1 || 1));
        const authorizations = [
          `Bearer ${token}`,
          ...Array.from({ length: drawn - 1 }, (_, i) => `Bearer ${bulkToken(1 + i * step)}`),
        ];
        drawSets.push(authorizations);
        if (count > 1) await edgeRouting(edge, bulkToken(count - 1), 'a bulk token routing');
        const options = loadOf(authorizations);
        // Every token drawn read once (its row, its budgets, its spend account's settled copy),
        // then the load itself warmed up.
        await touchEach(url, authorizations, small, TOKEN_CONNECTIONS);
        await load({ ...options, seconds: 2 });
        await idle(pid);
        const lookupsBefore = await tokenLookups(edge);
        const before = await cpuSeconds(pid);
        const result = await load(options);
        const perRequest = (((await cpuSeconds(pid)) - before) / result.requests) * 1e6;
        const lookupsAfter = await tokenLookups(edge);
        const delta = (kind: string) => (lookupsAfter[kind] ?? 0) - (lookupsBefore[kind] ?? 0);
        const cold = delta('miss') + delta('unknown');
        smallestPerToken ||= perRequest;
        lines.push(
          [
            count.toLocaleString('en-US').padEnd(11),
            drawn.toLocaleString('en-US').padStart(11),
            result.rps.toFixed(0).padStart(8),
            perRequest.toFixed(0).padStart(12),
            `${(perRequest / smallestPerToken).toFixed(2)}x`.padStart(11),
            (delta('hit') / (delta('hit') + cold)).toFixed(3).padStart(10),
            (cold / result.seconds).toFixed(0).padStart(15),
            // What the edge spent above the 1-token case, per lookup that went to Postgres.
            (cold > 0 ? ((perRequest - smallestPerToken) * result.requests) / cold : 0)
              .toFixed(0)
              .padStart(15),
            String(result.errors).padStart(7),
          ].join(' '),
        );
      }
      // The cases above ran one after the other, each on a machine whose speed drifts by more
      // than the 10 % the curve is judged by, and the first after the edge's own warm-up.
      // Now, the database at its largest, the same edge takes each draw in turn, round after
      // round: the median of each against the one token's, side by side in time.
      const perRequestOf: number[][] = drawSets.map(() => []);
      for (let round = 0; round < TOKEN_ROUNDS; round += 1) {
        for (const [index, authorizations] of drawSets.entries()) {
          await idle(pid);
          const before = await cpuSeconds(pid);
          const result = await load(loadOf(authorizations));
          perRequestOf[index]!.push((((await cpuSeconds(pid)) - before) / result.requests) * 1e6);
        }
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
      const oneToken = median(perRequestOf[0]!);
      lines.push(
        '',
        `the same, ${seeded.toLocaleString('en-US')} tokens in the database, the draws taking turns (${TOKEN_ROUNDS} rounds of ${SECONDS} s each):`,
        'drawn from   edge µs/req, each round           median  vs 1 token',
        ...drawSets.map((authorizations, index) =>
          [
            authorizations.length.toLocaleString('en-US').padEnd(10),
            perRequestOf[index]!.map((value) => value.toFixed(0).padStart(6))
              .join(' ')
              .padEnd(32),
            median(perRequestOf[index]!).toFixed(0).padStart(7),
            `${(median(perRequestOf[index]!) / oneToken).toFixed(2)}x`.padStart(11),
          ].join(' '),
        ),
      );
    }
    process.stdout.write(`growth of the edge's cost\n${lines.join('\n')}\n`);
  } finally {
    floor?.kill();
    await Promise.all(apps.map((app) => app.stop()));
    await bench.remove();
  }
}

await main();
