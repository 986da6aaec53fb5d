import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// Prisma's schema engine compiled to WebAssembly: it turns one Prisma schema into the SQL
// that creates it, or diffs two schemas, with no native binary and no database. Its
// package imports the `.wasm` file directly, which Node 20 cannot, so it is
// instantiated here by hand.

interface DiffTarget {
  tag: 'empty' | 'schemaDatamodel';
  files?: { path: string; content: string }[];
}

interface SchemaEngine {
  diff(params: {
    from: DiffTarget;
    to: DiffTarget;
    script: boolean;
    exitCode: boolean | null;
    filters: { externalTables: string[]; externalEnums: string[] };
  }): Promise<{ exitCode: number; stdout: string | null }>;
}

type WasmExports = Record<string, unknown>;

// Node's WebAssembly global, which @types/node 20 leaves undeclared.
const { WebAssembly } = globalThis as unknown as {
  WebAssembly: {
    instantiate(bytes: Buffer, imports: object): Promise<{ instance: { exports: WasmExports } }>;
  };
};

interface EngineBindings {
  __wbg_set_wasm(exports: WasmExports): void;
  SchemaEngine: {
    new: (options: unknown, log: (line: string) => void, adapter: unknown) => Promise<SchemaEngine>;
  };
}

const require = createRequire(import.meta.url);

interface LoadedEngine {
  engine: SchemaEngine;
  close: () => Promise<void>;
}

async function loadEngine(schema: string, databaseUrl: string): Promise<LoadedEngine> {
  const bindingsPath = require.resolve('@prisma/schema-engine-wasm/schema_engine_bg');
  const bindings = (await import(pathToFileURL(bindingsPath).href)) as EngineBindings;
  const bytes = await readFile(path.join(path.dirname(bindingsPath), 'schema_engine_bg.wasm'));
  const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': bindings });
  bindings.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();

  // The engine insists on a connected driver adapter even for schema-to-schema diffs,
  // though it runs no query: the server's maintenance database always exists.
  const maintenance = new URL(databaseUrl);
  maintenance.pathname = '/postgres';
  const { PrismaPg } = await import('@prisma/adapter-pg');
  const utilsPath = require.resolve('@prisma/driver-adapter-utils', {
    paths: [path.dirname(require.resolve('@prisma/adapter-pg'))],
  });
  const { bindMigrationAwareSqlAdapterFactory } = (await import(pathToFileURL(utilsPath).href)) as {
    bindMigrationAwareSqlAdapterFactory: (factory: unknown) => unknown;
  };
  const factory = new PrismaPg({ connectionString: maintenance.toString() });
  const opened: { dispose(): Promise<void> }[] = [];
  const adapter = bindMigrationAwareSqlAdapterFactory({
    provider: factory.provider,
    adapterName: factory.adapterName,
    connect: async () => {
      const connection = await factory.connect();
      opened.push(connection);
      return connection;
    },
    connectToShadowDb: () => Promise.reject(new Error('no shadow database is used')),
  });
  const engine = await bindings.SchemaEngine.new(
    { datamodels: [['schema.prisma', schema]] },
    () => undefined,
    adapter,
  );
  return { engine, close: async () => void (await Promise.all(opened.map((c) => c.dispose()))) };
}

/** The SQL that takes a database from schema `from` (or nothing) to schema `to`. */
export async function diffSchemas(
  from: string | null,
  to: string,
  databaseUrl: string,
): Promise<string> {
  const { engine, close } = await loadEngine(to, databaseUrl);
  const target = (content: string): DiffTarget => ({
    tag: 'schemaDatamodel',
    files: [{ path: 'schema.prisma', content }],
  });
  try {
    const result = await engine.diff({
      from: from === null ? { tag: 'empty' } : target(from),
      to: target(to),
      script: true,
      exitCode: null,
      filters: { externalTables: [], externalEnums: [] },
    });
    return result.stdout ?? '';
  } finally {
    await close();
  }
}
