import { randomBytes } from 'node:crypto';
import { applyMigrations, defaultMigrationsDirectory } from '@switchyard/db';
import pg from 'pg';

// Each test run gets a database of its own, migrated with the real migrations, so runs
// never collide and nothing leaks from one to the next.

const DEFAULT_SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

function onDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function administer(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: onDatabase(serverUrl, 'postgres') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(
  serverUrl = process.env.DATABASE_URL ?? DEFAULT_SERVER,
): Promise<TestDatabase> {
  const name = `sy_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  await administer(serverUrl, `CREATE DATABASE "${name}"`);
  const url = onDatabase(serverUrl, name);
  await applyMigrations(url, defaultMigrationsDirectory());
  return { name, url, drop: () => dropTestDatabase(serverUrl, name) };
}

export function dropTestDatabase(serverUrl: string, name: string): Promise<void> {
  return administer(serverUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}

/** Runs SQL against a test database (fixtures and assertions that no API exposes). */
export async function query<T extends pg.QueryResultRow = Record<string, unknown>>(
  databaseUrl: string,
  sql: string,
  values: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Locks the rows `selectSql` selects in a transaction of its own, until the returned
 * function commits it: a spec holds back what updates them, to see what a client is told
 * while the update waits. `FOR NO KEY UPDATE`: rows that refer to them by a foreign key may
 * still be inserted.
 */
export async function holdRowLocks(
  databaseUrl: string,
  selectSql: string,
  values: unknown[] = [],
): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query(`${selectSql} FOR NO KEY UPDATE`, values);
  } catch (error) {
    await client.end();
    throw error;
  }
  return async () => {
    try {
      await client.query('COMMIT');
    } finally {
      await client.end();
    }
  };
}
