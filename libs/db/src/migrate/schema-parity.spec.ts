import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { applyMigrations } from './migrator.js';
import { defaultMigrationsDirectory, schemaPath } from './paths.js';
import { diffSchemas } from './schema-engine.js';
import { createScratchDatabase, type ScratchDatabase } from './scratch-database.fixture.js';

// The migrations must build exactly the database that schema.prisma describes. The
// reference is built from the schema alone by Prisma's own engine; both databases are
// then compared through the Postgres catalog. A partitioned table (UsageLog, which a Prisma
// schema cannot declare as such) is compared as the table it is to Prisma: its partitions
// are left out, and its indexes read as a plain table's ("ON ONLY" is a partitioned
// index's wording); that it is partitioned is checked on its own below.

/** The partitions of partitioned tables: their columns, keys and indexes are the parent's. */
const NOT_A_PARTITION = (relname: string) =>
  `${relname} NOT IN (SELECT relname FROM pg_class WHERE relispartition)`;

const CATALOG_QUERIES = {
  tables: `SELECT table_name FROM information_schema.tables
           WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
             AND ${NOT_A_PARTITION('table_name')} ORDER BY 1`,
  columns: `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type,
                   a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS default
            FROM pg_attribute a
            JOIN pg_class c ON c.oid = a.attrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
              AND a.attnum > 0 AND NOT a.attisdropped
              AND c.relname <> '_prisma_migrations'
            ORDER BY 1, 2`,
  constraints: `SELECT c.relname AS table, con.conname AS name, con.contype::text AS kind,
                       pg_get_constraintdef(con.oid) AS definition
                FROM pg_constraint con
                JOIN pg_class c ON c.oid = con.conrelid
                JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = 'public' AND c.relname <> '_prisma_migrations'
                  AND NOT c.relispartition
                ORDER BY 1, 2`,
  indexes: `SELECT tablename AS table, indexname AS name,
                   replace(indexdef, ' ON ONLY ', ' ON ') AS definition
            FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'
              AND ${NOT_A_PARTITION('tablename')}
            ORDER BY 1, 2`,
  enums: `SELECT t.typname AS name, string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) AS labels
          FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
          JOIN pg_namespace n ON n.oid = t.typnamespace
          WHERE n.nspname = 'public' GROUP BY 1 ORDER BY 1`,
} as const;

type Catalog = Record<keyof typeof CATALOG_QUERIES, Record<string, unknown>[]>;

async function readCatalog(url: string): Promise<Catalog> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const catalog = {} as Catalog;
    for (const [part, sql] of Object.entries(CATALOG_QUERIES) as [keyof Catalog, string][]) {
      catalog[part] = (await client.query(sql)).rows;
    }
    return catalog;
  } finally {
    await client.end();
  }
}

describe('the migrations and schema.prisma', () => {
  let migrated: ScratchDatabase;
  let described: ScratchDatabase;

  beforeAll(async () => {
    migrated = await createScratchDatabase('migrated');
    described = await createScratchDatabase('described');
    await applyMigrations(migrated.url, defaultMigrationsDirectory());
    const sql = await diffSchemas(null, await readFile(schemaPath, 'utf8'), described.url);
    const client = new pg.Client({ connectionString: described.url });
    await client.connect();
    await client.query(sql);
    await client.end();
  });

  afterAll(async () => {
    await migrated?.drop();
    await described?.drop();
  });

  it.each(Object.keys(CATALOG_QUERIES) as (keyof Catalog)[])('agree on every %s', async (part) => {
    const [fromMigrations, fromSchema] = await Promise.all([
      readCatalog(migrated.url),
      readCatalog(described.url),
    ]);
    expect(fromSchema[part].length).toBeGreaterThan(0);
    expect(fromMigrations[part]).toEqual(fromSchema[part]);
  });

  it('include the unique constraints the gateway relies on', async () => {
    const { indexes } = await readCatalog(migrated.url);
    const unique = indexes
      .filter((i) => String(i.definition).startsWith('CREATE UNIQUE INDEX'))
      .map((i) => i.name);
    expect(unique).toEqual(
      expect.arrayContaining([
        'Token_keyHash_key',
        'UsageLog_requestId_requestedAt_key',
        'ChannelKey_channelId_fingerprint_key',
      ]),
    );
  });

  it('partition UsageLog by month, with a default partition for what no month takes', async () => {
    const client = new pg.Client({ connectionString: migrated.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ key: string; partitions: string[] }>(
        `SELECT pg_get_partkeydef(p.oid) AS key,
                array_agg(pg_get_expr(c.relpartbound, c.oid) ORDER BY c.relname) AS partitions
           FROM pg_class p JOIN pg_inherits i ON i.inhparent = p.oid
           JOIN pg_class c ON c.oid = i.inhrelid
          WHERE p.relname = 'UsageLog' GROUP BY p.oid`,
      );
      expect(rows[0]?.key).toBe('RANGE ("requestedAt")');
      expect(rows[0]?.partitions).toContain('DEFAULT');
      // This month and the two ahead, at least.
      expect(
        rows[0]?.partitions.filter((bound) => bound.startsWith('FOR VALUES FROM')).length,
      ).toBeGreaterThanOrEqual(3);
    } finally {
      await client.end();
    }
  });
});
