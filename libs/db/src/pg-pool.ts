import pg from 'pg';
import { type DatabaseOptions } from './database-options.js';

// Every `pg` pool of the suite (the Prisma client's driver adapter and the plain-SQL pool)
// comes from here, so the two concerns below hold for all of them (docs/scaling.md,
// "PgBouncer").

/**
 * How connections reach Postgres. `pgbouncer`: through PgBouncer in transaction pooling,
 * where consecutive transactions of one client connection may run on different server
 * connections. Declared on the URL as `?pgbouncer=true`, the flag Prisma's own engine
 * reads for the same purpose, so one DATABASE_URL says it for every pool of the suite.
 */
export type DatabasePooler = 'direct' | 'pgbouncer';

export interface PgPoolSettings {
  pooler: DatabasePooler;
  /** The URL without the flag: `pg` would send unknown parameters to the server. */
  connectionString: string;
}

export function pgPoolSettings(url: string): PgPoolSettings {
  const parsed = new URL(url);
  const flag = parsed.searchParams.get('pgbouncer');
  if (flag === null) return { pooler: 'direct', connectionString: url };
  parsed.searchParams.delete('pgbouncer');
  return { pooler: flag === 'true' ? 'pgbouncer' : 'direct', connectionString: parsed.toString() };
}

/**
 * A `pg` client whose statements are never named. PgBouncer 1.18 in transaction pooling
 * does not carry a named prepared statement from the server connection that parsed it to
 * the next one, so a statement prepared in one transaction is unknown ("prepared statement
 * does not exist") in a later one. Unnamed, each is parsed and planned at every execution:
 * about a third more wall time per metering settlement than prepared once per connection
 * (docs/scaling.md, "PgBouncer"), so only behind PgBouncer.
 */
class UnnamedStatementClient extends pg.Client {
  override query(...args: unknown[]): never {
    const [config] = args;
    if (typeof config === 'object' && config !== null && 'name' in config) {
      const { name: _name, ...unnamed } = config as pg.QueryConfig;
      args[0] = unnamed;
    }
    return (super.query as (...a: unknown[]) => never)(...args);
  }
}

/**
 * A pool whose connection errors never end the process: an idle client losing its server
 * is reported on the pool (the next query reconnects), and a client checked out when its
 * server goes (a restart of Postgres or of PgBouncer) emits `error` with no pool listener
 * attached, which without one of its own would be an uncaught exception. Its query fails on
 * its own, and the caller discards the client.
 */
export function createPgPool(
  options: DatabaseOptions,
  config: Omit<pg.PoolConfig, 'connectionString' | 'max' | 'Client'> = {},
): pg.Pool {
  const { pooler, connectionString } = pgPoolSettings(options.url);
  const pool = new pg.Pool({
    connectionTimeoutMillis: 5_000,
    ...config,
    connectionString,
    max: options.poolSize,
    ...(pooler === 'pgbouncer' ? { Client: UnnamedStatementClient } : {}),
  });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}
