import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';

// Types for a web app's API client, generated from the OpenAPI document a service's build
// writes (see writeOpenApiDocument in libs/service). The output is git-ignored: a DTO change
// reaches the pages on the next build, and one that breaks a page fails its type check.
//
// usage: node ../../scripts/generate-api-types.mjs <openapi.json> <output.ts>
// (paths relative to the package that runs it)

const [source, target] = process.argv.slice(2);
if (!source || !target) {
  console.error('usage: generate-api-types.mjs <openapi.json> <output.ts>');
  process.exit(2);
}
const document = JSON.parse(await readFile(path.resolve(source), 'utf8'));
const ast = await openapiTS(document, {
  exportType: true,
  alphabetize: true,
  defaultNonNullable: false,
});
await mkdir(path.dirname(path.resolve(target)), { recursive: true });
await writeFile(
  path.resolve(target),
  `// Generated from ${document.info?.title ?? 'the API'}'s OpenAPI document by scripts/generate-api-types.mjs. Do not edit.\n\n${astToString(ast)}`,
);
