// A Jest reporter that turns a run kept alive after its last test into a failure. Jest
// otherwise waits for ever when a test, or the code it tests, leaves a connection or a
// timer behind, and CI learns of it only from its own time limit. A leak is usually a
// real shutdown defect of the service under test (docs/architecture.md, "Code layout and conventions", shutdown).

import { setTimeout } from 'node:timers';

const GRACE_MS = 15_000;

export default class ExitGuard {
  onRunComplete() {
    setTimeout(() => {
      const held = process.getActiveResourcesInfo().filter((kind) => kind !== 'TTYWrap');
      process.stderr.write(
        `\njest: the run ended ${GRACE_MS / 1000} s ago, but the process is still held ` +
          `open (${held.join(', ')}): a test or the code it tests leaves a connection or a ` +
          'timer behind. Find it with `--detectOpenHandles`.\n',
      );
      process.exit(1);
    }, GRACE_MS).unref();
  }
}
