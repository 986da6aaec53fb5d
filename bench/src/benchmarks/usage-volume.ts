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
// rows, as UsagePage does. The database is dropped at the end, unless BENCH_USAGE_KEEP=1;
// a later run given it in BENCH_USAGE_DATABASE_URL measures it again without loading.
//
//   BENCH_ONLY=usage-volume BENCH_USAGE_ROWS=1000000 pnpm --filter @switchyard/bench bench

const ROWS = Number(process.env.BENCH_USAGE_ROWS ?? 50_000_000);
/** Keeps the filled database for another run, which names it in BENCH_USAGE_DATABASE_URL. */
const KEEP =
  process.env.BENCH_USAGE_KEEP === '1' || process.env.BENCH_USAGE_DATABASE_URL !== undefined;
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

/** The first moment (UTC, a timestamp) of the month `monthsBack` before the current one. */
function monthStart(monthsBack: number): string {
  return `(date_trunc('month', now() AT TIME ZONE 'UTC') - interval '${monthsBack} months')`;
}

/**
 * Fills each month as a plain table and attaches it as UsageLog's partition afterwards, so
 * Postgres builds each index once by sorting rather than row by row: hours become minutes
 * here. The rows are what a steady load would have written, evenly over the months, up to now.
 */
async function load(url: string): Promise<number> {
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
  const [span] = await query<{ first: string; seconds: number }>(
    url,
    `SELECT (${monthStart(MONTHS - 1)})::text AS first,
            extract(epoch FROM now() - (${monthStart(MONTHS - 1)} AT TIME ZONE 'UTC'))::float8 AS seconds`,
  );
  const started = performance.now();
  let loaded = 0;
  for (let back = MONTHS - 1; back >= 0; back -= 1) {
    const [month] = await query<{
      name: string;
      from: string;
      to: string;
      first: number;
      last: number;
    }>(
      url,
      `WITH m AS (SELECT (${monthStart(back)}) AT TIME ZONE 'UTC' AS lo,
                         (${monthStart(back - 1)}) AT TIME ZONE 'UTC' AS hi,
                         (${monthStart(MONTHS - 1)}) AT TIME ZONE 'UTC' AS origin)
       SELECT 'UsageLog_' || to_char(lo, 'YYYY_MM') AS name, lo::text AS "from", hi::text AS "to",
              ceil(extract(epoch FROM lo - origin) / $1 * $2)::int + 1 AS first,
              least($2, ceil(extract(epoch FROM hi - origin) / $1 * $2)::int) AS last
       FROM m`,
      [span!.seconds, ROWS],
    );
    const { name, from, to, first, last } = month!;
    // The migrations made the current month and those ahead, empty: replaced by a filled one.
    await query(url, `DROP TABLE IF EXISTS "${name}"`);
    await query(url, `CREATE TABLE "${name}" (LIKE "UsageLog" INCLUDING DEFAULTS)`);
    for (let lo = first; lo <= last; lo += CHUNK) {
      const hi = Math.min(last, lo + CHUNK - 1);
      await query(
        url,
        `INSERT INTO "${name}" ("requestId", "tokenId", "channelId", endpoint, model,
           "promptTokens", "completionTokens", cost, status, "latencyMs", "requestedAt")
         SELECT 'bench-' || g, (SELECT min(id) FROM "Token") + g % ${TOKENS},
                (SELECT min(id) FROM "Channel") + g % ${CHANNELS}, 'chat.completions',
                'model-' || (g % 12), 100 + g % 900, 50 + g % 400, 1234 + g % 5000,
                CASE WHEN g % 50 = 0 THEN 429 ELSE 200 END, 300 + g % 700,
                -- Kept inside the month whatever the float and millisecond rounding.
                least(greatest(('${span!.first}'::timestamp AT TIME ZONE 'UTC')
                  + ((g - 1)::float8 / $1 * $2) * interval '1 second', $3::timestamptz),
                  $4::timestamptz - interval '1 millisecond')
         FROM generate_series(${lo}, ${hi}) g`,
        [ROWS, span!.seconds, from, to],
      );
    }
    await query(
      url,
      `SET maintenance_work_mem = '1GB';
       ALTER TABLE "UsageLog" ATTACH PARTITION "${name}"
         FOR VALUES FROM ('${from}') TO ('${to}')`,
    );
    loaded += Math.max(0, last - first + 1);
    process.stdout.write(
      `  ${name}: ${loaded.toLocaleString('en')} rows, ${Math.round((performance.now() - started) / 1000)} s\n`,
    );
  }
  await query(url, 'VACUUM ANALYZE "UsageLog"');
  return Math.round((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const kept = process.env.BENCH_USAGE_DATABASE_URL;
  const database = kept ? { url: kept, drop: () => Promise.resolve() } : await createTestDatabase();
  let admin: AppProcess | undefined;
  try {
    const loadSeconds = kept ? 0 : await load(database.url);
    if (KEEP) process.stdout.write(`  kept: BENCH_USAGE_DATABASE_URL=${database.url}\n`);
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
    if (!KEEP) await database.drop();
  }
}

await main();
