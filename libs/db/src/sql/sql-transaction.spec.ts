import pg from 'pg';
import { applyMigrations } from '../migrate/migrator.js';
import { defaultMigrationsDirectory } from '../migrate/paths.js';
import {
  createScratchDatabase,
  type ScratchDatabase,
} from '../migrate/scratch-database.fixture.js';
import { inSqlTransaction, isSqlTransactionConflict } from './sql-transaction.js';

// Transactions over the plain-SQL pool against a migrated database: all or nothing, and
// the connection goes back to the pool either way.

let database: ScratchDatabase;
let pool: pg.Pool;

beforeAll(async () => {
  database = await createScratchDatabase('sqltx');
  await applyMigrations(database.url, defaultMigrationsDirectory());
  pool = new pg.Pool({ connectionString: database.url, max: 1 });
});

afterAll(async () => {
  await pool.end();
  await database.drop();
});

const settingCount = async (key: string) =>
  Number(
    (await pool.query<{ n: string }>(`SELECT count(*) AS n FROM "Setting" WHERE key = $1`, [key]))
      .rows[0]!.n,
  );

it('commits what the work wrote when it resolves', async () => {
  const result = await inSqlTransaction(pool, async (client) => {
    await client.query(
      `INSERT INTO "Setting" (key, value, "updatedAt") VALUES ('kept', '1'::json, now())`,
    );
    return 'done';
  });
  expect(result).toBe('done');
  expect(await settingCount('kept')).toBe(1);
});

it('rolls everything back and rethrows when the work throws, and frees the connection', async () => {
  const failure = new Error('the work failed');
  await expect(
    inSqlTransaction(pool, async (client) => {
      await client.query(
        `INSERT INTO "Setting" (key, value, "updatedAt") VALUES ('gone', '1'::json, now())`,
      );
      throw failure;
    }),
  ).rejects.toBe(failure);
  expect(await settingCount('gone')).toBe(0);
  // The pool holds one connection: a leaked one would make this wait forever.
  await expect(inSqlTransaction(pool, () => Promise.resolve('free'))).resolves.toBe('free');
});

it('tells deadlocks and serialization failures from other errors', async () => {
  const raised = (code: string) =>
    inSqlTransaction(pool, (client) =>
      client.query(`DO $$ BEGIN RAISE EXCEPTION 'raised' USING ERRCODE = '${code}'; END $$`),
    ).catch((error: unknown) => error);
  expect(isSqlTransactionConflict(await raised('40P01'))).toBe(true);
  expect(isSqlTransactionConflict(await raised('40001'))).toBe(true);
  expect(isSqlTransactionConflict(await raised('23505'))).toBe(false);
  expect(isSqlTransactionConflict(new Error('not from Postgres'))).toBe(false);
});
