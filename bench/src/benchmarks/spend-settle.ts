import { Redis } from 'ioredis';
import { SpendLedger, spendAccount, type Carve } from '@switchyard/spend';
import { testRedisPrefix } from '@switchyard/testing';
import { commandStats, privateRedis, redisCpuSeconds } from '../lib/private-redis.js';

// What settling carved requests costs Redis (docs/performance.md, "Settling a batch per
// block"): metering settles each batch of usage with one script call per batch, and most
// of a busy token's requests were carved from a block of holds (docs/architecture.md,
// "Spend holds"), so the call gives each one back to its block. Settlements of SETTLE_BATCH
// requests carved from SETTLE_BLOCKS blocks (one per edge), each sent twice as a replayed
// batch would be, on a Redis of the benchmark's own. Counts first: they do not depend on
// the machine; the script time is Redis's own, per request.
//
//   node bench/dist/benchmarks/spend-settle.js   (SETTLE_ROUNDS, default 400;
//                                                 SETTLE_BATCH, default 24;
//                                                 SETTLE_BLOCKS, default 2)

const ROUNDS = Number(process.env.SETTLE_ROUNDS ?? 400);
const BATCH = Number(process.env.SETTLE_BATCH ?? 24);
const BLOCKS = Number(process.env.SETTLE_BLOCKS ?? 2);
const CARVED = 100;

function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** The microseconds Redis spent running scripts (EVALSHA), inner commands included. */
async function scriptMicros(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(/^cmdstat_evalsha:calls=\d+,usec=(\d+)/m.exec(info)?.[1] ?? 0);
}

const server = await privateRedis();
const stats = new Redis(server.url);
const client = new Redis(server.url, { keyPrefix: `${testRedisPrefix()}:` });
const ledger = new SpendLedger(client);
try {
  let settled = 0;
  let micros = 0;
  let cpu = 0;
  const commands = new Map<string, number>();
  for (let round = 0; round < ROUNDS; round += 1) {
    const account = spendAccount('token', round % 10);
    const blocks = Array.from({ length: BLOCKS }, (_, b) => `r${round}b${b}`);
    for (const [b, id] of blocks.entries()) {
      const held = await ledger.reserve(
        `own-${round}-${b}`,
        [{ account, limit: Number.MAX_SAFE_INTEGER, amount: 0 }],
        (accounts) => Promise.resolve(accounts.map(() => 0)),
        Date.now(),
        { id, spare: BATCH * CARVED * 2, minimum: 1 },
      );
      if (held.kind !== 'held' || !held.block) throw new Error('no block was held');
    }
    const carves: Carve[] = Array.from({ length: BATCH }, (_, i) => ({
      block: blocks[i % BLOCKS]!,
      amount: CARVED,
      requestId: `req-${round}-${i}`,
    }));
    const settlement = { account, total: round, requestIds: [], carves };
    await stats.config('RESETSTAT');
    const [microsBefore, cpuBefore] = [await scriptMicros(stats), await redisCpuSeconds(stats)];
    await ledger.settle([settlement]);
    await ledger.settle([settlement]);
    micros += (await scriptMicros(stats)) - microsBefore;
    cpu += (await redisCpuSeconds(stats)) - cpuBefore;
    for (const [name, calls] of await commandStats(stats)) {
      if (name.startsWith('config') || name === 'info') continue;
      commands.set(name, (commands.get(name) ?? 0) + calls);
    }
    settled += BATCH;
  }
  const perRequest = (n: number) => (n / settled).toFixed(2);
  log(
    `spend settlement: ${ROUNDS} batches of ${BATCH} carved requests from ${BLOCKS} block(s), each settled twice`,
  );
  log(`redis commands per request: ${perRequest([...commands.values()].reduce((a, b) => a + b))}`);
  for (const [name, calls] of [...commands].sort((a, b) => b[1] - a[1])) {
    log(`  ${name.padEnd(14)} ${String(calls).padStart(7)}  ${perRequest(calls)}/request`);
  }
  log(`script time per request: ${(micros / settled).toFixed(2)} µs (Redis's own count)`);
  log(`redis CPU per request: ${((cpu / settled) * 1e6).toFixed(1)} µs (INFO cpu, coarse)`);
} finally {
  client.disconnect();
  stats.disconnect();
  server.stop();
}
