import { randomBytes } from 'node:crypto';
import type { RoutedChannel, RoutedKey } from '@switchyard/contracts';
import { redactSecrets, registerSecret } from '@switchyard/observability';
import { RoutingTable } from '@switchyard/routing';

// What the size of a relay's pool of accounts costs a request in the two places it is
// walked (docs/performance.md, "A relay's pool of accounts"): the routing table's first
// eight candidates (a request takes its first account and fails over to a few more at
// most; a limited channel's accounts are checked eight at a time), and the redaction of
// one log line, which removes every secret the process has opened, and the opening of one
// more key (its registration for that redaction). In this process, with 1 to 100,000
// accounts; the edge's own cost with a pool is measured in turns by checkouts.js with
// BENCH_ACCOUNTS.
//
//   node bench/dist/benchmarks/pool-size.js

const SIZES = [1, 100, 1_000, 10_000, 100_000];
const LINE =
  '{"level":40,"time":1764488000000,"service":"edge","requestId":"0b6c1f0e-6f1f-4a7b-9a0e-2f3b4c5d6e7f","status":401,"msg":"upstream refused: Incorrect API key provided"}\n';

function channelOf(keys: RoutedKey[]): RoutedChannel {
  return {
    id: 1,
    name: 'relay',
    kind: 'aggregated',
    provider: 'openai',
    settings: {},
    baseUrl: 'http://relay',
    models: ['gpt-4o'],
    modelMapping: {},
    priority: 0,
    weight: 1,
    groups: ['default'],
    keys,
  };
}

/** Microseconds per call of `work`, the best of three timed loops after a warm-up. */
function microsPerCall(work: () => void, calls: number): number {
  for (let i = 0; i < Math.min(calls, 1_000); i += 1) work();
  let best = Infinity;
  for (let round = 0; round < 3; round += 1) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i += 1) work();
    best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e3 / calls);
  }
  return best;
}

const secret = () => `sk-${randomBytes(24).toString('base64url')}`;

process.stdout.write(
  'accounts   first 8 candidates   opening one more key   redacting a log line\n',
);
let registered = 0;
for (const size of SIZES) {
  const keys = Array.from({ length: size }, (_, i) => ({
    id: i + 1,
    secretCiphertext: '',
    rpm: null,
    tpm: null,
    concurrency: null,
    coolingUntil: null,
  }));
  const table = new RoutingTable({ version: 1, generatedAt: 0, channels: [channelOf(keys)] });
  const query = { model: 'gpt-4o', group: 'default', now: 0 };
  const candidates = microsPerCall(() => {
    let taken = 0;
    for (const _candidate of table.candidates(query)) if ((taken += 1) === 8) break;
  }, 20_000);
  // The process has opened every account's key by now (one registered secret each).
  while (registered < size - 1) {
    registerSecret(secret());
    registered += 1;
  }
  let opened = 0;
  const opening = microsPerCall(() => {
    registerSecret(secret());
    opened += 1;
  }, 50);
  registered += opened;
  const redaction = microsPerCall(() => redactSecrets(LINE), 2_000);
  process.stdout.write(
    [
      String(size).padStart(8),
      `${candidates.toFixed(2)} µs`.padStart(20),
      `${opening.toFixed(1)} µs`.padStart(22),
      `${redaction.toFixed(2)} µs`.padStart(22),
    ].join(' ') + '\n',
  );
}
