import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

// The admin API's types, generated from the OpenAPI document the admin service's build
// writes (apps/admin/src/openapi-cli.ts). The output is git-ignored: a DTO change reaches
// the pages on the next build, and one that breaks a page fails its type check.

const source = fileURLToPath(import.meta.resolve('@switchyard/admin/openapi.json'));
const target = fileURLToPath(import.meta.resolve('../src/generated/admin-api.ts'));
const document = JSON.parse(await readFile(source, 'utf8'));
const ast = await openapiTS(document, {
  exportType: true,
  alphabetize: true,
  defaultNonNullable: false,
});
await mkdir(path.dirname(target), { recursive: true });
await writeFile(
  target,
  `// Generated from the admin API's OpenAPI document by scripts/generate-client.mjs. Do not edit.\n\n${astToString(ast)}`,
);
