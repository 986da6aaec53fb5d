import { Redis } from 'ioredis';
import {
  generateGatewayToken,
  generateSecretKeySpec,
  lastFour,
  SecretCipher,
  sha256Hex,
} from '@switchyard/security';
import {
  createTestDatabase,
  waitFor,
  query,
  startApp,
  testRedisPrefix,
  type AppProcess,
} from '@switchyard/testing';
import { Pool } from 'undici';
import { commandStats, privateRedis, redisCpuSeconds } from '../lib/private-redis.js';

// What the account and token limits cost Redis per request (docs/performance.md, "Admission
// without a round trip"): a fixed number of requests through one edge, on an account and a
// token whose limits are far above the load, counted by a Redis of its own (so no other
// traffic shares its INFO commandstats) and by the edge's admission counter. Counts, not
// timings: it is meaningful on a busy machine.
//
//   node bench/dist/benchmarks/admission.js   (ADMISSION_REQUESTS, default 5000;
//                                              ADMISSION_CONNECTIONS, default 16;
//                                              ADMISSION_TOKENS, default 1: the requests
//                                              spread over that many tokens, each with a
//                                              quota and a rate limit, too quiet for blocks)

const REQUESTS = Number(process.env.ADMISSION_REQUESTS ?? 5_000);
const CONNECTIONS = Number(process.env.ADMISSION_CONNECTIONS ?? 16);
const TOKENS = Number(process.env.ADMISSION_TOKENS ?? 1);
// Counts do not depend on a quiet machine, so a busy one may take its time starting.
const STARTUP_MS = 120_000;
const UPSTREAM_KEY = 'sk-bench-upstream';

function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

async function admissions(edge: AppProcess): Promise<Record<string, number>> {
  const metrics = await (await fetch(`${edge.opsUrl}/metrics`)).text();
  return Object.fromEntries(
    [...metrics.matchAll(/^edge_limit_admissions_total\{[^}]*path="(\w+)"[^}]*\} (\d+)/gm)].map(
      ([, path, value]) => [path!, Number(value)],
    ),
  );
}

/** `count` requests, `CONNECTIONS` at a time, each with the next of `tokens` in turn. */
async function send(pool: Pool, tokens: string[], count: number): Promise<number> {
  const body = JSON.stringify({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Say something short about limits.' }],
  });
  let next = 0;
  let failed = 0;
  const worker = async () => {
    while (next < count) {
      const token = tokens[next % tokens.length]!;
      next += 1;
      const response = await pool.request({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body,
      });
      await response.body.dump();
      if (response.statusCode !== 200) failed += 1;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return failed;
}

const redisServer = await privateRedis();
const database = await createTestDatabase();
const secretKeys = generateSecretKeySpec('bench');
const env = {
  DATABASE_URL: database.url,
  REDIS_URL: redisServer.url,
  REDIS_PREFIX: testRedisPrefix(),
  SECRET_KEYS: secretKeys,
  LOG_LEVEL: 'warn',
};
const apps: AppProcess[] = [];
const redis = new Redis(redisServer.url);
try {
  const mock = await startApp('mock-upstream', {
    env: { ...env, MOCK_ACCOUNTS: UPSTREAM_KEY },
    timeoutMs: STARTUP_MS,
  });
  apps.push(mock);
  // As in the gateway benchmark: every limit far above the load, so none refuses.
  const [channel] = await query<{ id: number }>(
    database.url,
    `INSERT INTO "Channel" (name, kind, "baseUrl", models, "rpmLimit", "tpmLimit", "concurrencyLimit", "updatedAt")
     VALUES ('limited', 'single', $1, '{gpt-4o-mini}', 100000000, 2000000000, 100000, now()) RETURNING id`,
    [mock.url],
  );
  await query(
    database.url,
    `INSERT INTO "ChannelKey" ("channelId", "secretCiphertext", fingerprint, "lastFour") VALUES ($1, $2, $3, $4)`,
    [
      channel!.id,
      new SecretCipher([secretKeys]).seal(UPSTREAM_KEY),
      sha256Hex(UPSTREAM_KEY),
      lastFour(UPSTREAM_KEY),
    ],
  );
  const tokens = Array.from({ length: TOKENS }, () => generateGatewayToken());
  await query(
    database.url,
    `INSERT INTO "Token" (name, "keyHash", "lastFour", quota, "rateLimit", "updatedAt")
     SELECT 'limited', hash, four, 1000000000000, 100000000, now()
     FROM unnest($1::text[], $2::text[]) AS t(hash, four)`,
    [tokens.map(sha256Hex), tokens.map(lastFour)],
  );
  const token = tokens[0]!;
  apps.push(await startApp('router', { env, timeoutMs: STARTUP_MS }));
  const edge = await startApp('edge', { env, readyPath: '/readyz', timeoutMs: STARTUP_MS });
  apps.push(edge);
  const pool = new Pool(edge.url, { connections: CONNECTIONS });
  await waitFor(
    async () => {
      const response = await fetch(`${edge.url}/v1/models`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return ((await response.json()) as { data: unknown[] }).data.length === 1 ? true : undefined;
    },
    { timeoutMs: 10_000, what: 'edge routing' },
  );
  // Warm-up: connections, every token's cache entry and settled spend, the account's allowance.
  await send(pool, tokens, Math.max(200, TOKENS));

  const before = await admissions(edge);
  await redis.config('RESETSTAT');
  const redisCpuBefore = await redisCpuSeconds(redis);
  const started = performance.now();
  const failed = await send(pool, tokens, REQUESTS);
  const seconds = (performance.now() - started) / 1000;
  const redisCpu = (await redisCpuSeconds(redis)) - redisCpuBefore;
  const stats = await commandStats(redis);
  const after = await admissions(edge);
  await pool.close();

  const perRequest = (calls: number) => (calls / REQUESTS).toFixed(3);
  const total = [...stats.values()].reduce((a, b) => a + b, 0);
  log(
    `admission: ${REQUESTS} requests over ${TOKENS} token(s), ${CONNECTIONS} at once, ${failed} failed, ${(REQUESTS / seconds).toFixed(0)} requests/s`,
  );
  log(`redis CPU per request: ${((redisCpu / REQUESTS) * 1e6).toFixed(1)} µs`);
  log(`redis commands per request: ${perRequest(total)} (scripts' inner calls included)`);
  for (const [name, calls] of [...stats].sort((a, b) => b[1] - a[1]))
    log(`  ${name.padEnd(20)} ${String(calls).padStart(7)}  ${perRequest(calls)}/request`);
  const local = (after.local ?? 0) - (before.local ?? 0);
  const roundTrip = (after.redis ?? 0) - (before.redis ?? 0);
  log(
    local + roundTrip === 0
      ? 'admissions: no edge_limit_admissions_total counter on this edge'
      : `admissions: ${local} local, ${roundTrip} with a round trip (${((100 * local) / (local + roundTrip)).toFixed(1)} % local)`,
  );
} finally {
  redis.disconnect();
  await Promise.all(apps.map((app) => app.stop()));
  await database.drop();
  redisServer.stop();
}
