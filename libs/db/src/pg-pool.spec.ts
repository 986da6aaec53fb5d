import { createScratchDatabase, type ScratchDatabase } from './migrate/scratch-database.fixture.js';
import { applyMigrations, MigrationError } from './migrate/migrator.js';
import { defaultMigrationsDirectory } from './migrate/paths.js';
import { createPgPool, pgPoolSettings } from './pg-pool.js';
import { STATEMENT_TIMEOUT_MS } from './sql/sql-database.module.js';
import { inSqlTransaction } from './sql/sql-transaction.js';

// The pools' behaviour behind PgBouncer that a direct server can show: the flag on the URL,
// unnamed statements, the transaction-scoped timeout, and the refusal to migrate through
// the pooler. The same paths against a real PgBouncer: test/scale/pgbouncer.spec.ts.

let database: ScratchDatabase;

beforeAll(async () => {
  database = await createScratchDatabase('pgpool');
});

afterAll(() => database.drop());

const pgbouncerUrl = (url: string) => `${url}${url.includes('?') ? '&' : '?'}pgbouncer=true`;

it('reads the pooler from the URL and keeps the flag away from the server', () => {
  const plain = 'postgresql://u:p@db:5432/app?sslmode=disable';
  expect(pgPoolSettings(plain)).toEqual({ pooler: 'direct', connectionString: plain });
  expect(pgPoolSettings(pgbouncerUrl(plain))).toEqual({
    pooler: 'pgbouncer',
    connectionString: plain,
  });
  expect(pgPoolSettings(`${plain}&pgbouncer=false`).pooler).toBe('direct');
});

it('behind PgBouncer, prepares no named statement on the server', async () => {
  const pool = createPgPool({ url: pgbouncerUrl(database.url), poolSize: 1 });
  try {
    const client = await pool.connect();
    try {
      for (let i = 0; i < 2; i++) {
        await client.query({ name: 'pg-pool.spec.one', text: 'SELECT $1::int AS n', values: [i] });
      }
      const { rows } = await client.query<{ n: string }>(
        'SELECT count(*) AS n FROM pg_prepared_statements',
      );
      expect(rows[0]!.n).toBe('0');
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
});

it('direct, prepares a named statement once per connection', async () => {
  const pool = createPgPool({ url: database.url, poolSize: 1 });
  try {
    await pool.query({ name: 'pg-pool.spec.one', text: 'SELECT $1::int AS n', values: [1] });
    const { rows } = await pool.query<{ name: string }>('SELECT name FROM pg_prepared_statements');
    expect(rows).toEqual([{ name: 'pg-pool.spec.one' }]);
  } finally {
    await pool.end();
  }
});

it('bounds the statements of a transaction without a startup parameter, for it only', async () => {
  const pool = createPgPool({ url: pgbouncerUrl(database.url), poolSize: 1 });
  const timeout = async (run: (sql: string) => Promise<{ rows: { t: string }[] }>) =>
    (await run(`SELECT current_setting('statement_timeout') AS t`)).rows[0]!.t;
  try {
    const inside = await inSqlTransaction(pool, (client) => timeout((sql) => client.query(sql)));
    expect(inside).toBe(`${STATEMENT_TIMEOUT_MS / 60_000}min`);
    // The same server connection afterwards: nothing left for the next transaction.
    expect(await timeout((sql) => pool.query(sql))).toBe('0');
  } finally {
    await pool.end();
  }
});

it('refuses to migrate through PgBouncer: the migration lock is a session one', async () => {
  await expect(
    applyMigrations(pgbouncerUrl(database.url), defaultMigrationsDirectory()),
  ).rejects.toThrow(MigrationError);
});

it('survives the server ending a connection that is checked out', async () => {
  const pool = createPgPool({ url: pgbouncerUrl(database.url), poolSize: 2 });
  try {
    const client = await pool.connect();
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const ended = new Promise((resolve) => client.once('end', resolve));
    await pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    await ended;
    await expect(client.query('SELECT 1')).rejects.toThrow();
    client.release(true);
    await expect(pool.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
  } finally {
    await pool.end();
  }
});
