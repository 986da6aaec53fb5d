import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot, sourceFiles } from '@switchyard/testing';

// How every app is started (docs/architecture.md, "Code layout and conventions"): its
// ServiceDefinition in `src/<app>.definition.ts`, used by main.ts and by the specs; main.ts
// only starts it; a `*.service.ts` file is a Nest provider and nothing else; SQL is run by
// repositories (libs/db and libs/gateway-store, the stores themselves, excepted).

const apps = readdirSync(path.join(repositoryRoot, 'apps'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .filter((app) => sourceFiles({ roots: [`apps/${app}/src`] }).includes(`apps/${app}/src/main.ts`));

const read = (file: string) => readFileSync(path.join(repositoryRoot, file), 'utf8');
const camel = (app: string) => app.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase());

/** The whole of a main.ts. */
// Tracing starts first, and the app is imported after it: its instrumentations patch
// modules as they load (docs/operations.md, "Traces").
const mainOf = (app: string) =>
  `import { startTracing } from '@switchyard/observability/tracing';\n\n` +
  `// Tracing starts before the app is imported: its instrumentations patch http, ioredis and\n` +
  `// pg as they load (docs/operations.md, "Traces"). Without an OTLP endpoint it does nothing.\n` +
  `await startTracing('${app}');\n` +
  `const { startService } = await import('@switchyard/service');\n` +
  `const { ${camel(app)}Definition } = await import('./${app}.definition.js');\n\n` +
  `await startService(${camel(app)}Definition);\n`;

describe('service layout', () => {
  it('finds the apps', () => {
    expect(apps).toEqual(expect.arrayContaining(['admin', 'edge', 'router', 'metering']));
  });

  it.each(apps)('%s: main.ts only starts the definition in <app>.definition.ts', (app) => {
    expect(read(`apps/${app}/src/main.ts`)).toBe(mainOf(app));
    expect(read(`apps/${app}/src/${app}.definition.ts`)).toContain(
      `export const ${camel(app)}Definition: ServiceDefinition<`,
    );
  });

  it('names only Nest providers *.service.ts', () => {
    const services = sourceFiles({ roots: ['apps', 'libs'] }).filter((file) =>
      file.endsWith('.service.ts'),
    );
    expect(services.length).toBeGreaterThan(5);
    expect(services.filter((file) => !read(file).includes('@Injectable('))).toEqual([]);
  });

  it('runs SQL in repositories only', () => {
    const runsSql = /\bSQL_POOL\b|\binSqlTransaction\(|\$queryRaw|\$executeRaw/;
    const elsewhere = sourceFiles({ roots: ['apps', 'libs'] }).filter(
      (file) =>
        !/\.(repository|module)\.ts$/.test(file) &&
        !/^libs\/(db|gateway-store)\//.test(file) &&
        runsSql.test(read(file)),
    );
    expect(elsewhere).toEqual([]);
  });
});
