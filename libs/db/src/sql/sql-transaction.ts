import pg from 'pg';
import { STATEMENT_TIMEOUT_MS, type SqlPool } from './sql-database.module.js';

/** One connection of the pool, inside a transaction while `inSqlTransaction` runs. */
export type SqlClient = pg.PoolClient;

/**
 * Runs `work` in one transaction on one of the pool's connections: committed when `work`
 * resolves, rolled back when it throws (the error is rethrown); every statement of it is
 * bounded by STATEMENT_TIMEOUT_MS. A connection that cannot even roll back (reset, server
 * gone) leaves the pool instead of serving the next caller.
 */
export async function inSqlTransaction<T>(
  pool: SqlPool,
  work: (client: SqlClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    // In the BEGIN's own round trip (one simple query), and gone at COMMIT or ROLLBACK: the
    // bound holds behind PgBouncer too, where the pool cannot set it at connection and a
    // session SET would outlive the transaction on a server connection others then use.
    await client.query(`BEGIN; SET LOCAL statement_timeout = ${STATEMENT_TIMEOUT_MS}`);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}

/**
 * A deadlock or serialization failure (SQLSTATE 40P01, 40001) from the plain-SQL pool: the
 * transaction was rolled back and running it again may succeed.
 */
export function isSqlTransactionConflict(error: unknown): boolean {
  return error instanceof pg.DatabaseError && (error.code === '40P01' || error.code === '40001');
}
