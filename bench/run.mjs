// `pnpm bench`: runs every benchmark built into bench/dist, one after the other, so
// they never compete for the machine. Arguments after `--` go to each benchmark.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), 'dist');
const benchmarks = readdirSync(dist)
  .filter((file) => file.endsWith('.js'))
  .sort();
let failed = 0;
for (const file of benchmarks) {
  console.log(`\n==> ${file}`);
  const { status } = spawnSync(
    process.execPath,
    [path.join(dist, file), ...process.argv.slice(2)],
    {
      stdio: 'inherit',
    },
  );
  if (status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
