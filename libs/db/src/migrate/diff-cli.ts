#!/usr/bin/env node
import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadEnvironment, StoreEnv } from '@switchyard/config';
import { defaultMigrationsDirectory, schemaPath } from './paths.js';
import { diffSchemas } from './schema-engine.js';

// `pnpm db:diff --name add_something`: writes the next migration, the SQL between the
// schema as last committed (or nothing, for the first migration) and the working copy.

const { values } = parseArgs({
  options: {
    name: { type: 'string' },
    from: { type: 'string', default: 'HEAD' },
  },
});

if (!values.name || !/^[a-z0-9_]+$/.test(values.name)) {
  console.error('db:diff: give the migration a --name in snake_case');
  process.exit(1);
}

const migrationsDir = defaultMigrationsDirectory();
const current = await readFile(schemaPath, 'utf8');
let previous: string | null;
try {
  previous = execFileSync('git', ['show', `${values.from}:prisma/schema.prisma`], {
    cwd: path.dirname(schemaPath),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
} catch {
  previous = null;
}

const sql = await diffSchemas(previous, current, loadEnvironment(StoreEnv).DATABASE_URL);
if (sql.trim() === '' || /^-- This is an empty migration/.test(sql.trim())) {
  console.log('db:diff: the schema did not change; no migration written');
  process.exit(0);
}
const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
const folder = path.join(migrationsDir, `${stamp}_${values.name}`);
await mkdir(folder, { recursive: true });
await writeFile(path.join(folder, 'migration.sql'), sql);
await writeFile(path.join(migrationsDir, 'migration_lock.toml'), 'provider = "postgresql"\n');
console.log(`db:diff: wrote ${path.relative(process.cwd(), folder)}/migration.sql`);
