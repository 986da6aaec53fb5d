import { randomBytes } from 'node:crypto';
import pg from 'pg';

// A throwaway database on the configured server, for this lib's own tests (the shared
// test helpers in @switchyard/testing depend on this lib, so it cannot use them).

export interface ScratchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

function serverUrl(): URL {
  return new URL(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres');
}

async function onMaintenanceDatabase(sql: string): Promise<void> {
  const url = serverUrl();
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function createScratchDatabase(purpose: string): Promise<ScratchDatabase> {
  const name = `sy_test_${purpose}_${randomBytes(4).toString('hex')}`;
  await onMaintenanceDatabase(`CREATE DATABASE "${name}"`);
  const url = serverUrl();
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () => onMaintenanceDatabase(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}
