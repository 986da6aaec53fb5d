import {
  Global,
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import pg from 'pg';
import { type DatabaseOptions } from '../database-options.js';
import { createPgPool, pgPoolSettings } from '../pg-pool.js';

// Plain SQL over a `pg` pool, where the Prisma client costs too much: the edge, which reads
// a row or two and must stay small (the client and its query compiler cost it about 100 MB
// of resident memory for one lookup), and metering's settlement, a few statements per
// batch where the client's query interpreter took most of the worker's CPU
// (docs/performance.md). The schema stays Prisma's: queries here name its tables and
// columns, and the tests that use them run against the migrated database.

/** The longest any statement of the pool may run. */
export const STATEMENT_TIMEOUT_MS = 60_000;

/** The pool's handle, injected where SQL is run. */
export const SQL_POOL = Symbol('SQL_POOL');
export type SqlPool = pg.Pool;

/** Readiness: the database answers a trivial query. */
@Injectable()
export class SqlReadiness {
  readonly name = 'postgres';
  constructor(@Inject(SQL_POOL) private readonly pool: SqlPool) {}

  async check(): Promise<void> {
    await this.pool.query('SELECT 1');
  }
}

/** Closes the pool after the HTTP server has drained (application shutdown). */
@Injectable()
class PoolCloser implements OnApplicationShutdown {
  constructor(@Inject(SQL_POOL) private readonly pool: SqlPool) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}

@Global()
@Module({})
export class SqlDatabaseModule {
  static forRoot(options: DatabaseOptions): DynamicModule {
    return {
      module: SqlDatabaseModule,
      providers: [
        {
          provide: SQL_POOL,
          useFactory: () =>
            createPgPool(options, {
              // Direct to Postgres, the bound is a startup parameter: no round trip of its
              // own. PgBouncer refuses it there ("unsupported startup parameter"), and a
              // session-level SET would leak to whichever client gets the server connection
              // next; behind it, each transaction sets it with SET LOCAL instead
              // (inSqlTransaction) and single statements take the role's default
              // (docs/scaling.md, "PgBouncer").
              ...(pgPoolSettings(options.url).pooler === 'direct'
                ? { statement_timeout: STATEMENT_TIMEOUT_MS }
                : {}),
            }),
        },
        SqlReadiness,
        PoolCloser,
      ],
      exports: [SQL_POOL, SqlReadiness],
    };
  }
}
