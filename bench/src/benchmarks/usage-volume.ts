import {
  createTestDatabase,
  query,
  startApp,
  testRedisPrefix,
  type AppProcess,
} from '@switchyard/testing';
import { generateSecretKeySpec } from '@switchyard/security';

// The admin's usage reports over many usage rows (docs/capacity.md, "Usage at volume"):
// a database of its own gets BENCH_USAGE_ROWS rows (50 million by default) spread over
// twelve months of UsageLog's month partitions, by generate_series, in chunks of a million;
// then the admin service, started on it, answers what the dashboard asks, each timed over
// BENCH_REPEAT runs (the median): the usage page's first page, filtered by token and by a
// day, the summaries by day, model and token (the overview's charts and the usage totals),
// and the CSV export, which pages through /api/usage/logs 100 rows at a time up to 10,000
// rows, as UsagePage does. The database is dropped at the end.
//
//   BENCH_ONLY=usage-volume BENCH_USAGE_ROWS=1000000 pnpm --filter @switchyard/bench bench

const ROWS = Number(process.env.BENCH_USAGE_ROWS ?? 50_000_000);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 3);
const CHUNK = 1_000_000;
const MONTHS = 12;
const TOKENS = 200;
const CHANNELS = 20;
/** UsagePage's EXPORT_LIMIT and page size. */
const EXPORT_LIMIT = 10_000;
const EXPORT_PAGE = 100;
const ADMIN = { username: 'bench-admin', password: 'bench admin password' };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function timed(run: () => Promise<void>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < REPEAT; i += 1) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  return Math.round(median(samples));
}

async function load(url: string): Promise<number> {
  // Months before the current one; the migrations made the current one and those ahead.
  await query(
    url,
    `DO $$
     DECLARE m date := (date_trunc('month', now() AT TIME ZONE 'UTC') - interval '${MONTHS - 1} months')::date;
     BEGIN
       WHILE m < date_trunc('month', now() AT TIME ZONE 'UTC') LOOP
         EXECUTE format('CREATE TABLE IF NOT EXISTS %I PARTITION OF "UsageLog" FOR VALUES FROM (%L) TO (%L)',
           'UsageLog_' || to_char(m, 'YYYY_MM'), m::text || ' 00:00:00+00',
           (m + interval '1 month')::date::text || ' 00:00:00+00');
         m := (m + interval '1 month')::date;
       END LOOP;
     END $$`,
  );
  await query(
    url,
    `INSERT INTO "Token" (name, "keyHash", "lastFour", "updatedAt")
     SELECT 'bench-' || g, md5('bench-' || g) || md5('bench+' || g), '0000', now()
     FROM generate_series(1, ${TOKENS}) g`,
  );
  await query(
    url,
    `INSERT INTO "Channel" (name, kind, "baseUrl", models, "updatedAt")
     SELECT 'bench-' || g, 'single', 'http://127.0.0.1:9', ARRAY['model-0'], now()
     FROM generate_series(1, ${CHANNELS}) g`,
  );
  const started = performance.now();
  // Rows evenly over the months, oldest first, as a steady load would have written them.
  for (let from = 1; from <= ROWS; from += CHUNK) {
    const to = Math.min(ROWS, from + CHUNK - 1);
    await query(
      url,
      `INSERT INTO "UsageLog" ("requestId", "tokenId", "channelId", endpoint, model,
         "promptTokens", "completionTokens", cost, status, "latencyMs", "requestedAt")
       SELECT 'bench-' || g, (SELECT min(id) FROM "Token") + g % ${TOKENS},
              (SELECT min(id) FROM "Channel") + g % ${CHANNELS}, 'chat.completions',
              'model-' || (g % 12), 100 + g % 900, 50 + g % 400, 1234 + g % 5000,
              CASE WHEN g % 50 = 0 THEN 429 ELSE 200 END, 300 + g % 700,
              date_trunc('month', now()) - interval '${MONTHS - 1} months'
                + (g::float8 / ${ROWS}) * (now() - (date_trunc('month', now()) - interval '${MONTHS - 1} months'))
       FROM generate_series(${from}, ${to}) g`,
    );
    process.stdout.write(`  loaded ${to.toLocaleString('en')} rows\n`);
  }
  await query(url, 'ANALYZE "UsageLog"');
  return Math.round((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const database = await createTestDatabase();
  let admin: AppProcess | undefined;
  try {
    const loadSeconds = await load(database.url);
    admin = await startApp('admin', {
      env: {
        DATABASE_URL: database.url,
        REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        REDIS_PREFIX: testRedisPrefix(),
        SECRET_KEYS: generateSecretKeySpec('bench'),
        ADMIN_USERNAME: ADMIN.username,
        ADMIN_PASSWORD: ADMIN.password,
        LOG_LEVEL: 'warn',
      },
      readyPath: '/readyz',
    });
    // The bootstrapped administrator would be asked to change the password first.
    await query(database.url, `UPDATE "AdminUser" SET "mustChangePassword" = false`);
    const login = await fetch(`${admin.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const { token: session } = (await login.json()) as { token: string };
    const get = async (path: string): Promise<unknown> => {
      const response = await fetch(`${admin!.url}${path}`, {
        headers: { authorization: `Bearer ${session}` },
        signal: AbortSignal.timeout(600_000),
      });
      if (response.status !== 200)
        throw new Error(`${path}: ${response.status} ${await response.text()}`);
      return response.json();
    };
    const [token] = await query<{ id: number }>(database.url, 'SELECT min(id) AS id FROM "Token"');
    const dayAgo = new Date(Date.now() - 86_400_000).toISOString();
    const figures: Record<string, number> = {};
    const measure = async (name: string, run: () => Promise<unknown>) => {
      figures[name] = await timed(async () => {
        await run();
      });
      process.stdout.write(`  ${name}: ${figures[name]} ms\n`);
    };
    await measure('logs, first page', () => get('/api/usage/logs?page=1&pageSize=20'));
    await measure('logs, one token', () =>
      get(`/api/usage/logs?page=1&pageSize=20&tokenId=${token!.id}`),
    );
    await measure('logs, last day', () =>
      get(`/api/usage/logs?page=1&pageSize=20&from=${encodeURIComponent(dayAgo)}`),
    );
    for (const groupBy of ['day', 'model', 'token']) {
      await measure(`summary by ${groupBy}, 30 days`, () =>
        get(`/api/usage/summary?groupBy=${groupBy}`),
      );
    }
    await measure(`CSV export, ${EXPORT_LIMIT} rows`, async () => {
      let rows = 0;
      for (let page = 1; rows < EXPORT_LIMIT; page += 1) {
        const answer = (await get(`/api/usage/logs?page=${page}&pageSize=${EXPORT_PAGE}`)) as {
          items: unknown[];
        };
        rows += answer.items.length;
        if (answer.items.length < EXPORT_PAGE) break;
      }
    });
    process.stdout.write(
      `${JSON.stringify({ rows: ROWS, months: MONTHS, loadSeconds, medianMs: figures })}\n`,
    );
  } finally {
    await admin?.stop();
    await database.drop();
  }
}

await main();
