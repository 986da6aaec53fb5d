// `@switchyard/db/sql`: plain SQL without the Prisma client, for the hot paths: the edge's
// lookups and metering's settlements (docs/performance.md).
export {
  SqlDatabaseModule,
  SqlReadiness,
  SQL_POOL,
  type SqlPool,
} from './sql/sql-database.module.js';
export {
  inSqlTransaction,
  isSqlTransactionConflict,
  type SqlClient,
} from './sql/sql-transaction.js';
export { TokenStatus } from './generated/prisma/enums.js';
export type { DatabaseOptions } from './database-options.js';
