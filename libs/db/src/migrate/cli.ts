#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigurationError, loadEnvironment, StoreEnv } from '@switchyard/config';
import { applyMigrations, markRolledBack, MigrationError } from './migrator.js';
import { defaultMigrationsDirectory } from './paths.js';

// `pnpm db:migrate`: apply pending migrations (the release step, and the Kubernetes Job).

const { values } = parseArgs({
  options: {
    dir: { type: 'string', default: defaultMigrationsDirectory() },
    'rolled-back': { type: 'string' },
  },
});

try {
  const { DATABASE_URL: databaseUrl } = loadEnvironment(StoreEnv);
  if (values['rolled-back']) {
    const marked = await markRolledBack(databaseUrl, values['rolled-back']);
    console.log(
      marked
        ? `marked ${values['rolled-back']} as rolled back`
        : `no failed migration named ${values['rolled-back']}`,
    );
    process.exit(marked ? 0 : 1);
  }
  const report = await applyMigrations(databaseUrl, values.dir);
  for (const name of report.applied) console.log(`applied ${name}`);
  console.log(
    report.applied.length === 0
      ? `database is up to date (${report.alreadyApplied.length} migrations)`
      : `${report.applied.length} migration(s) applied`,
  );
} catch (error) {
  const known = error instanceof MigrationError || error instanceof ConfigurationError;
  const message = known || error instanceof Error ? error.message : String(error);
  console.error(`db:migrate: ${message}`);
  process.exit(1);
}
