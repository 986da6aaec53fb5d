import { type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TokenStatus } from '../generated/prisma/enums.js';
import { applyMigrations } from '../migrate/migrator.js';
import { defaultMigrationsDirectory } from '../migrate/paths.js';
import {
  createScratchDatabase,
  type ScratchDatabase,
} from '../migrate/scratch-database.fixture.js';
import {
  SQL_POOL,
  SqlDatabaseModule,
  SqlReadiness,
  STATEMENT_TIMEOUT_MS,
  type SqlPool,
} from './sql-database.module.js';

// The plain-SQL entry point against a migrated database: the pool reads the schema's
// tables with its types, readiness follows the server, and the pool closes with the app.

let database: ScratchDatabase;

beforeAll(async () => {
  database = await createScratchDatabase('sql');
  await applyMigrations(database.url, defaultMigrationsDirectory());
});

afterAll(() => database.drop());

async function contextFor(url: string): Promise<INestApplicationContext> {
  return NestFactory.createApplicationContext(SqlDatabaseModule.forRoot({ url, poolSize: 2 }), {
    logger: false,
  });
}

it('reads rows of the Prisma schema with their Postgres types', async () => {
  const app = await contextFor(database.url);
  try {
    const pool = app.get<SqlPool>(SQL_POOL);
    await pool.query(
      `INSERT INTO "Token" (name, "keyHash", "lastFour", models, "updatedAt")
       VALUES ('t', $1, 'abcd', '{gpt-4o,gpt-4o-mini}', now())`,
      ['f'.repeat(64)],
    );
    const { rows } = await pool.query<{ status: string; models: string[]; expiresAt: unknown }>(
      `SELECT status, models, "expiresAt" FROM "Token" WHERE "keyHash" = $1`,
      ['f'.repeat(64)],
    );
    expect(rows).toEqual([
      { status: TokenStatus.enabled, models: ['gpt-4o', 'gpt-4o-mini'], expiresAt: null },
    ]);
  } finally {
    await app.close();
  }
});

it('bounds every statement of the pool with a timeout', async () => {
  const app = await contextFor(database.url);
  try {
    const { rows } = await app
      .get<SqlPool>(SQL_POOL)
      .query<{ timeout: string }>(
        `SELECT setting AS timeout FROM pg_settings WHERE name = 'statement_timeout'`,
      );
    expect(Number(rows[0]!.timeout)).toBe(STATEMENT_TIMEOUT_MS);
  } finally {
    await app.close();
  }
});

it('is ready while the database answers, and not when it cannot be reached', async () => {
  const app = await contextFor(database.url);
  await expect(app.get(SqlReadiness).check()).resolves.toBeUndefined();
  await app.close();

  const unreachable = new URL(database.url);
  unreachable.port = '1';
  const away = await contextFor(unreachable.toString());
  await expect(away.get(SqlReadiness).check()).rejects.toThrow();
  await away.close();
});

it('ends the pool when the application closes', async () => {
  const app = await contextFor(database.url);
  const pool = app.get<SqlPool>(SQL_POOL);
  await pool.query('SELECT 1');
  await app.close();
  expect(pool.ended).toBe(true);
});

it('survives the server ending a connection that is checked out', async () => {
  const app = await contextFor(database.url);
  const pool = app.get<SqlPool>(SQL_POOL);
  try {
    const client = await pool.connect();
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    const ended = new Promise((resolve) => client.once('end', resolve));
    // What a Postgres or PgBouncer restart does to a connection between two statements.
    await pool.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    await ended;
    await expect(client.query('SELECT 1')).rejects.toThrow();
    client.release(true);
    await expect(pool.query('SELECT 1 AS one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
  } finally {
    await app.close();
  }
});
