// Before and after docs/reliability.md, "Counting tokens in bounded time": one word of random
// letters counted by gpt-tokenizer on the whole text (what TokenCounter did before) and by
// TokenCounter, with the wall time and the longest the event loop was held, in CPU time.
// Run after `pnpm build`: `cd libs/providers && node bench/token-count.mjs`. SIZES (in
// characters, comma-separated) replaces the default; the library alone is run up to 120,000
// characters, since it takes hours at 9 MB.
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { TokenCounter } from '../dist/token-counter.js';

/** Letters of a seed of the length's own: the library remembers pieces it merged. */
function letters(length) {
  const codes = new Uint8Array(length);
  let seed = length;
  for (let i = 0; i < length; i += 1) {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    codes[i] = 97 + (seed % 26);
  }
  return Buffer.from(codes).toString('latin1');
}

function cpuMs() {
  const used = process.threadCpuUsage();
  return (used.user + used.system) / 1e3;
}

const counter = new TokenCounter();
await counter.load();
const sizes = (process.env.SIZES ?? '60000,120000,9000000').split(',').map(Number);
for (const size of sizes) {
  const text = letters(size);
  let longest = 0;
  let last = cpuMs();
  const tick = setInterval(() => {
    const now = cpuMs();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  const wall = performance.now();
  const tokens = await counter.count('gpt-4o', text);
  const took = performance.now() - wall;
  clearInterval(tick);
  console.log(
    `after  ${size} chars: ${tokens} tokens, ${Math.round(took)} ms wall, ` +
      `longest turn ${Math.round(longest)} ms CPU`,
  );
  if (size <= 120_000) {
    const wall = performance.now();
    const cpu = cpuMs();
    const tokens = countTokens(text);
    console.log(
      `before ${size} chars: ${tokens} tokens, ${Math.round(performance.now() - wall)} ms wall, ` +
        `one turn of ${Math.round(cpuMs() - cpu)} ms CPU`,
    );
  }
}
