import { randomBytes } from 'node:crypto';
import type { RoutedKey } from '@switchyard/contracts';
import { redactSecrets, registerSecret } from '@switchyard/observability';
import { RoutingTable } from '@switchyard/routing';
import { routedChannel, routedKey } from '@switchyard/routing/testing';

// What a request's routing costs by the size of what it is routed over (docs/performance.md,
// "A relay's pool of accounts"), in this process:
// - a relay's pool of 1 to 100,000 accounts, in the two places a request could walk all of
//   it: the routing table's first eight candidates (a request takes its first account and
//   fails over to a few more at most; a limited channel's accounts are checked eight at a
//   time), and the redaction of one log line, which removes every secret the process has
//   opened, with the opening of one more key (its registration for that redaction);
// - 1 to 10,000 channels whose model entries are patterns (`gpt-4*`, `*-all`), which a
//   request's model name is matched against, beside one channel that names it exactly.
// The edge's own cost with a pool is measured in turns by checkouts.js with BENCH_ACCOUNTS.
//
//   node bench/dist/benchmarks/routing-scale.js

const POOL_SIZES = [1, 100, 1_000, 10_000, 100_000];
const PATTERN_CHANNELS = [1, 100, 1_000, 10_000];
const LINE =
  '{"level":40,"time":1764488000000,"service":"edge","requestId":"0b6c1f0e-6f1f-4a7b-9a0e-2f3b4c5d6e7f","status":401,"msg":"upstream refused: Incorrect API key provided"}\n';

function keysOf(count: number): RoutedKey[] {
  return Array.from({ length: count }, (_, i) => routedKey(i + 1));
}

/** The first eight candidates for `gpt-4o`, as a request with failover takes them. */
function firstEight(table: RoutingTable): () => void {
  const query = { model: 'gpt-4o', group: 'default', now: 0 };
  return () => {
    let taken = 0;
    for (const _candidate of table.candidates(query)) if ((taken += 1) === 8) break;
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
  'accounts in a pool   first 8 candidates   opening one more key   redacting a log line\n',
);
let registered = 0;
for (const size of POOL_SIZES) {
  const table = new RoutingTable({
    version: 1,
    generatedAt: 0,
    channels: [routedChannel(1, { kind: 'aggregated', keys: keysOf(size) })],
  });
  const candidates = microsPerCall(firstEight(table), 20_000);
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
      String(size).padStart(18),
      `${candidates.toFixed(2)} µs`.padStart(20),
      `${opening.toFixed(1)} µs`.padStart(22),
      `${redaction.toFixed(2)} µs`.padStart(22),
    ].join(' ') + '\n',
  );
}

process.stdout.write('\nchannels with a pattern   first 8 candidates\n');
for (const count of PATTERN_CHANNELS) {
  const patterned = Array.from({ length: count }, (_, i) =>
    routedChannel(i + 2, { models: [i % 2 === 0 ? `vendor-${i}-*` : `*-${i}-all`] }),
  );
  const table = new RoutingTable({
    version: 1,
    generatedAt: 0,
    channels: [routedChannel(1), ...patterned],
  });
  const candidates = microsPerCall(firstEight(table), 20_000);
  process.stdout.write(
    `${String(count).padStart(23)} ${`${candidates.toFixed(2)} µs`.padStart(20)}\n`,
  );
}
