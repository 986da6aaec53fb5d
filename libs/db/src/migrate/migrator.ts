import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { pgPoolSettings } from '../pg-pool.js';

// Applies `prisma/migrations` the way `prisma migrate deploy` does, without Prisma's
// native engine (which cannot be downloaded here): the same advisory lock, the same
// `_prisma_migrations` table and rows, so the real CLI can take over at any time.
// Stricter than deploy in one way: an applied migration whose file changed is refused.

/** The advisory lock key Prisma Migrate takes, so our runner and Prisma's exclude each other. */
const PRISMA_ADVISORY_LOCK = 72707369;

const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export class MigrationError extends Error {
  override readonly name = 'MigrationError';
}

export interface MigrationReport {
  applied: string[];
  alreadyApplied: string[];
}

interface LocalMigration {
  name: string;
  sql: string;
  checksum: string;
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

async function readLocalMigrations(directory: string): Promise<LocalMigration[]> {
  const entries = await readdir(directory, { withFileTypes: true });
  const folders = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    folders.map(async (name) => {
      const bytes = await readFile(path.join(directory, name, 'migration.sql'));
      return {
        name,
        sql: bytes.toString('utf8'),
        checksum: createHash('sha256').update(bytes).digest('hex'),
      };
    }),
  );
}

/** A server going away mid-run fails the query in flight, not the process ('error'). */
function directClient(databaseUrl: string): pg.Client {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => undefined);
  return client;
}

export async function applyMigrations(
  databaseUrl: string,
  directory: string,
): Promise<MigrationReport> {
  if (pgPoolSettings(databaseUrl).pooler === 'pgbouncer') {
    // The advisory lock below is a session's: PgBouncer in transaction pooling would take
    // it on one server connection and run the migrations on others.
    throw new MigrationError(
      'migrations need a direct connection to Postgres, not one through PgBouncer (the URL has pgbouncer=true): give the migration its own DATABASE_URL to the server',
    );
  }
  const local = await readLocalMigrations(directory);
  const client = directClient(databaseUrl);
  await client.connect();
  try {
    // Two replicas starting together: the second waits here, then finds nothing to do.
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK]);
    await client.query(CREATE_MIGRATIONS_TABLE);
    const { rows } = await client.query<AppliedRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
    );

    const unfinished = rows.find((r) => r.finished_at === null && r.rolled_back_at === null);
    if (unfinished) {
      throw new MigrationError(
        `migration ${unfinished.migration_name} failed or is still running; fix the database, then ` +
          `mark it with "pnpm db:migrate --rolled-back ${unfinished.migration_name}" and run again`,
      );
    }

    const finished = new Map(
      rows.filter((r) => r.finished_at !== null).map((r) => [r.migration_name, r]),
    );
    const localNames = new Set(local.map((m) => m.name));
    const missing = [...finished.keys()].filter((name) => !localNames.has(name));
    if (missing.length > 0) {
      throw new MigrationError(
        `the database has migrations this build does not know: ${missing.join(', ')}`,
      );
    }
    for (const migration of local) {
      const row = finished.get(migration.name);
      if (row && row.checksum !== migration.checksum) {
        throw new MigrationError(
          `migration ${migration.name} was edited after it was applied (checksum ${row.checksum.slice(0, 12)}… ` +
            `in the database, ${migration.checksum.slice(0, 12)}… on disk); add a new migration instead`,
        );
      }
    }

    const report: MigrationReport = { applied: [], alreadyApplied: [] };
    for (const migration of local) {
      if (finished.has(migration.name)) {
        report.alreadyApplied.push(migration.name);
        continue;
      }
      await applyOne(client, migration);
      report.applied.push(migration.name);
    }
    return report;
  } finally {
    await client
      .query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK])
      .catch(() => undefined);
    await client.end();
  }
}

async function applyOne(client: pg.Client, migration: LocalMigration): Promise<void> {
  const id = randomUUID();
  await client.query(
    'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, $3, now(), 0)',
    [id, migration.checksum, migration.name],
  );
  try {
    // One script, as Prisma runs it; Postgres rolls back DDL with the transaction on error.
    await client.query(`BEGIN;\n${migration.sql}\n;COMMIT;`);
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    const message = error instanceof Error ? error.message : String(error);
    await client.query('UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1', [id, message]);
    throw new MigrationError(`migration ${migration.name} failed: ${message}`);
  }
  await client.query(
    'UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1',
    [id],
  );
}

/** Marks a failed migration as rolled back, as `prisma migrate resolve --rolled-back` does. */
export async function markRolledBack(databaseUrl: string, name: string): Promise<boolean> {
  const client = directClient(databaseUrl);
  await client.connect();
  try {
    const result = await client.query(
      'UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE migration_name = $1 AND finished_at IS NULL AND rolled_back_at IS NULL',
      [name],
    );
    return (result.rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}
