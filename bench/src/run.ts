import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// `pnpm bench`: every benchmark in benchmarks/, one after the other, each in its own
// process, so they never compete for the machine. Arguments go to each benchmark.

const directory = path.join(path.dirname(fileURLToPath(import.meta.url)), 'benchmarks');
const only = process.env.BENCH_ONLY;
let failed = 0;
for (const file of readdirSync(directory)
  .filter((f) => f.endsWith('.js'))
  .sort()) {
  if (only && !file.startsWith(only)) continue;
  process.stdout.write(`\n==> ${file.replace(/\.js$/, '')}\n`);
  const { status } = spawnSync(
    process.execPath,
    [path.join(directory, file), ...process.argv.slice(2)],
    { stdio: 'inherit' },
  );
  if (status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
