// `@switchyard/db/sql`: plain SQL without the Prisma client, for the edge's hot path.
export {
  SqlDatabaseModule,
  SqlReadiness,
  SQL_POOL,
  type SqlPool,
} from './sql/sql-database.module.js';
export { TokenStatus } from './generated/prisma/enums.js';
export type { DatabaseOptions } from './database-options.js';
