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
          useFactory: () => {
            const pool = new pg.Pool({
              connectionString: options.url,
              max: options.poolSize,
              connectionTimeoutMillis: 5_000,
              // Set at connection, no round trip of its own: a statement stuck behind a lock
              // fails after a minute (a settlement is then retried) instead of holding its
              // connection and its batch for good.
              statement_timeout: STATEMENT_TIMEOUT_MS,
            });
            // An idle client losing its server is reported here; the next query reconnects.
            pool.on('error', () => undefined);
            // A client checked out when its server goes (a restart, a pooler's restart) emits
            // `error` with no pool listener attached: without one of its own, that would end
            // the process. Its query fails on its own, and the caller discards the client.
            pool.on('connect', (client) => client.on('error', () => undefined));
            return pool;
          },
        },
        SqlReadiness,
        PoolCloser,
      ],
      exports: [SQL_POOL, SqlReadiness],
    };
  }
}
