import path from 'node:path';
import { defineConfig } from 'prisma/config';

// `prisma generate` never needs the native schema engine, but the CLI insists on finding
// one; any existing file satisfies it, and no engine can be downloaded here.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;

export default defineConfig({
  schema: path.join(import.meta.dirname, 'schema.prisma'),
  migrations: { path: path.join(import.meta.dirname, 'migrations') },
  datasource: {
    url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/switchyard',
  },
});
