import { SecretCipher, sha256Hex } from '@switchyard/security';
import { query, startApp, type AppProcess } from '@switchyard/testing';
import { Agent, request } from 'undici';
import { edgeRouting } from '../lib/edge-turns.js';
import { benchEnvironment } from '../lib/environment.js';
import { cpuSeconds } from '../lib/measure.js';
import { seedChannel, seedToken } from '../lib/seed.js';

// What budgets cost the edge per request (docs/budgets.md, "Reservations (the edge)";
// docs/performance.md, "Budgets"): the same chat request, non-streamed, sent by three tokens in
// alternating windows: one that nothing limits (no Redis on the request's path); one with a
// quota (its hold is one Redis round trip, as every limited token has always paid); and one
// of a team, owned by a member, under a token, a member and a team budget far above the
// load (every request holds its worst case on the three budgets' accounts in that same one
// round trip, and metering adds to three budget periods). The model is priced, so the holds
// are taken. Budgets against quota is their own cost; quota against nothing is the round trip.
// The load is a Node client with keep-alive connections (no wrk needed); the figure that
// matters is the edge's CPU per request, read from /proc, which does not depend on the
// load generator's speed. Short: BENCH_SECONDS per window (5 by default), BENCH_ROUNDS
// rounds (3), the sides' order rotating each round so drift in the machine's load falls on
// every side alike.

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const UPSTREAM_KEY = 'sk-bench-upstream';
const MODEL = 'gpt-4o';

interface Window {
  requests: number;
  errors: number;
  edgeCpuSeconds: number;
}

async function window(url: string, token: string, body: string, agent: Agent): Promise<Window> {
  const deadline = Date.now() + SECONDS * 1000;
  let requests = 0;
  let errors = 0;
  const worker = async () => {
    while (Date.now() < deadline) {
      const response = await request(`${url}/v1/chat/completions`, {
        method: 'POST',
        dispatcher: agent,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      });
      await response.body.dump();
      if (response.statusCode === 200) requests += 1;
      else errors += 1;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return { requests, errors, edgeCpuSeconds: 0 };
}

async function main(): Promise<void> {
  const bench = await benchEnvironment();
  const { env } = bench;
  const apps: AppProcess[] = [];
  const agent = new Agent({ connections: CONNECTIONS, pipelining: 1 });
  try {
    const mock = await startApp('mock-upstream', { env: { ...env, MOCK_ACCOUNTS: UPSTREAM_KEY } });
    apps.push(mock);
    await seedChannel(bench.databaseUrl, new SecretCipher([bench.secretKeys]), {
      name: 'bench',
      provider: 'openai',
      baseUrl: mock.url,
      models: [MODEL],
      keys: [UPSTREAM_KEY],
    });
    await query(
      bench.databaseUrl,
      `INSERT INTO "ModelPrice" (model, "inputPrice", "outputPrice", "updatedAt") VALUES ($1, 2500000, 10000000, now())`,
      [MODEL],
    );
    const off = await seedToken(bench.databaseUrl, { name: 'no limits' });
    const quota = await seedToken(bench.databaseUrl, {
      name: 'quota',
      limits: { quota: 1_000_000_000_000 },
    });
    const on = await seedToken(bench.databaseUrl, { name: 'budgets' });
    const [team] = await query<{ id: number }>(
      bench.databaseUrl,
      `INSERT INTO "Team" (name, "updatedAt") VALUES ('bench', now()) RETURNING id`,
    );
    const [user] = await query<{ id: number }>(
      bench.databaseUrl,
      `INSERT INTO "AdminUser" (username, "passwordHash", role, "updatedAt") VALUES ('bench-member', 'x', 'member', now()) RETURNING id`,
    );
    const [token] = await query<{ id: number }>(
      bench.databaseUrl,
      `UPDATE "Token" SET "teamId" = $2, "ownerId" = $3 WHERE "keyHash" = $1 RETURNING id`,
      [sha256Hex(on), team!.id, user!.id],
    );
    for (const [subject, level] of [
      [`token:${token!.id}`, 'token'],
      [`member:${team!.id}:${user!.id}`, 'member'],
      [`team:${team!.id}`, 'team'],
    ] as const) {
      await query(
        bench.databaseUrl,
        `INSERT INTO "Budget" (subject, level, amount, period, "updatedAt")
         VALUES ($1, $2::"BudgetLevel", 1000000000000, 'month', now())`,
        [subject, level],
      );
    }
    apps.push(await startApp('router', { env }));
    apps.push(await startApp('metering', { env, readyPath: '/readyz' }));
    const edge = await startApp('edge', { env, readyPath: '/readyz' });
    apps.push(edge);
    await edgeRouting(edge, on, 'edge routing');
    const body = JSON.stringify({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Say something short about budgets.' }],
    });
    const pid = edge.child.pid!;
    const sides = [
      ['off', off],
      ['quota', quota],
      ['on', on],
    ] as const;
    type Side = (typeof sides)[number][0];
    const totals = Object.fromEntries(
      sides.map(([label]) => [label, { requests: 0, errors: 0, edgeCpuSeconds: 0 }]),
    ) as Record<Side, Window>;
    // Warm every path up, then alternate, each round starting one side further on.
    for (const [, key] of sides) await window(edge.url, key, body, agent);
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = [...sides.slice(round % sides.length), ...sides.slice(0, round % sides.length)];
      for (const [label, key] of order) {
        const before = await cpuSeconds(pid);
        const result = await window(edge.url, key, body, agent);
        const cpu = (await cpuSeconds(pid)) - before;
        totals[label].requests += result.requests;
        totals[label].errors += result.errors;
        totals[label].edgeCpuSeconds += cpu;
      }
    }
    const perRequest = (w: Window) => (w.edgeCpuSeconds / w.requests) * 1e6;
    const rate = (w: Window) => w.requests / (SECONDS * ROUNDS);
    const percent = (a: Window, b: Window) =>
      `${((perRequest(a) / perRequest(b) - 1) * 100).toFixed(1)} %`;
    const [spend] = await query<{ n: string }>(
      bench.databaseUrl,
      `SELECT count(*)::text AS n FROM "BudgetSpend"`,
    );
    process.stdout.write(
      [
        `budgets bench: ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s per side`,
        ...sides.map(
          ([label]) =>
            `  ${label.padEnd(5)}: ${rate(totals[label]).toFixed(0)} req/s, edge CPU ${perRequest(totals[label]).toFixed(0)} µs/request, ${totals[label].errors} errors`,
        ),
        `  edge CPU per request, budgets against quota (the budgets' own work): ${percent(totals.on, totals.quota)}`,
        `  edge CPU per request, quota against no limits (the round trip): ${percent(totals.quota, totals.off)}`,
        `  edge CPU per request, budgets against no limits: ${percent(totals.on, totals.off)}`,
        `  budget periods written by metering: ${spend!.n}`,
        '',
      ].join('\n'),
    );
  } finally {
    await agent.close();
    await Promise.all(apps.map((app) => app.stop()));
    await bench.remove();
  }
}

await main();
