import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import path from 'node:path';

// The end-to-end run (docs/architecture.md, "Running the end-to-end tests"). With no
// arguments, every suite: first the suites that start what they need for themselves, one per
// core and at least two at a time, then the browser suites, which share one chat stack and
// so run one at a time. With arguments (paths, Jest's options), one Jest run of what they
// name, a suite at a time, as a developer replays one.

const jest = path.join(import.meta.dirname, '../node_modules/jest/bin/jest.js');
/** Suites with stacks of their own at once: most of a suite's time is its stack's waits. */
const WORKERS = Math.max(2, Math.min(4, availableParallelism()));

function run(args) {
  const { status, signal } = spawnSync(
    process.execPath,
    ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', jest, ...args],
    { stdio: 'inherit', cwd: import.meta.dirname },
  );
  if (signal) process.kill(process.pid, signal);
  return status ?? 1;
}

const given = process.argv.slice(2);
if (given.length > 0) process.exit(run(['--runInBand', ...given]));
const stacks = run(['--selectProjects', 'e2e', `--maxWorkers=${WORKERS}`]);
const browsers = run(['--selectProjects', 'web', '--runInBand']);
process.exit(stacks || browsers);
