import { cp, mkdtemp, rm, writeFile, appendFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { applyMigrations, markRolledBack, MigrationError } from './migrator.js';
import { defaultMigrationsDirectory } from './paths.js';
import { createScratchDatabase, type ScratchDatabase } from './scratch-database.fixture.js';

describe('applyMigrations', () => {
  let database: ScratchDatabase;
  let migrations: string;

  beforeEach(async () => {
    database = await createScratchDatabase('migrator');
    // A private copy of the real migrations, so a test can edit or add some.
    migrations = await mkdtemp(path.join(tmpdir(), 'sy-migrations-'));
    await cp(defaultMigrationsDirectory(), migrations, { recursive: true });
  });

  afterEach(async () => {
    await database.drop();
    await rm(migrations, { recursive: true, force: true });
  });

  async function bookkeeping(): Promise<Record<string, unknown>[]> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(
        'SELECT id, checksum, migration_name, finished_at, rolled_back_at, applied_steps_count, logs FROM "_prisma_migrations" ORDER BY started_at',
      );
      return rows;
    } finally {
      await client.end();
    }
  }

  async function addMigration(name: string, sql: string): Promise<void> {
    await mkdir(path.join(migrations, name));
    await writeFile(path.join(migrations, name, 'migration.sql'), sql);
  }

  it('applies every migration to a fresh database and records them as prisma migrate deploy does', async () => {
    const report = await applyMigrations(database.url, migrations);

    expect(report.applied.length).toBeGreaterThan(0);
    const rows = await bookkeeping();
    expect(rows.map((r) => r.migration_name)).toEqual(report.applied);
    for (const row of rows) {
      expect(String(row.id)).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.checksum).toMatch(/^[0-9a-f]{64}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.rolled_back_at).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
  });

  it('does nothing on an up-to-date database and applies only what is new', async () => {
    const first = await applyMigrations(database.url, migrations);
    const again = await applyMigrations(database.url, migrations);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied).toEqual(first.applied);

    await addMigration('99990101000000_add_note', 'CREATE TABLE "Note" ("id" SERIAL PRIMARY KEY);');
    const later = await applyMigrations(database.url, migrations);
    expect(later.applied).toEqual(['99990101000000_add_note']);
  });

  it('refuses to continue when an applied migration was edited', async () => {
    const { applied } = await applyMigrations(database.url, migrations);
    await appendFile(path.join(migrations, applied[0]!, 'migration.sql'), '\n-- edited\n');

    await expect(applyMigrations(database.url, migrations)).rejects.toThrow(
      /was edited after it was applied/,
    );
  });

  it('applies each migration once when two replicas start together', async () => {
    const [a, b] = await Promise.all([
      applyMigrations(database.url, migrations),
      applyMigrations(database.url, migrations),
    ]);

    const rows = await bookkeeping();
    expect(new Set(rows.map((r) => r.migration_name)).size).toBe(rows.length);
    expect([a.applied.length, b.applied.length].sort()).toEqual([0, rows.length]);
  });

  it('records a failed migration, refuses to go on, and resumes once it is marked rolled back', async () => {
    await applyMigrations(database.url, migrations);
    await addMigration(
      '99990101000000_broken',
      'CREATE TABLE "Half" ("id" INT);\nSELECT * FROM "does_not_exist";',
    );

    const failure = await applyMigrations(database.url, migrations).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(MigrationError);
    const failedRow = (await bookkeeping()).at(-1)!;
    expect(failedRow.finished_at).toBeNull();
    expect(String(failedRow.logs)).toMatch(/does_not_exist/);

    await expect(applyMigrations(database.url, migrations)).rejects.toThrow(
      /failed or is still running/,
    );

    expect(await markRolledBack(database.url, '99990101000000_broken')).toBe(true);
    await writeFile(
      path.join(migrations, '99990101000000_broken', 'migration.sql'),
      'CREATE TABLE "Half" ("id" INT);',
    );
    const resumed = await applyMigrations(database.url, migrations);
    expect(resumed.applied).toEqual(['99990101000000_broken']);
  });
});
