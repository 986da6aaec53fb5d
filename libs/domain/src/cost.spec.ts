import { costOf } from './cost.js';

describe('costOf', () => {
  it('prices prompt and completion tokens per million, in micro-dollars', () => {
    // gpt-4o: $2.50 and $10.00 per million tokens.
    const price = { inputPrice: 2_500_000, outputPrice: 10_000_000 };
    expect(costOf(1_000_000, 0, price)).toBe(2_500_000n);
    expect(costOf(1_000, 500, price)).toBe(2_500n + 5_000n);
  });

  it('rounds a fraction of a micro-dollar up, and nothing stays nothing', () => {
    const price = { inputPrice: 150_000, outputPrice: 600_000 };
    // 7 * 0.15 + 3 * 0.6 = 2.85 micro-dollars.
    expect(costOf(7, 3, price)).toBe(3n);
    expect(costOf(1, 0, { inputPrice: 1, outputPrice: 0 })).toBe(1n);
    expect(costOf(0, 0, price)).toBe(0n);
    expect(costOf(10, 10, { inputPrice: 0, outputPrice: 0 })).toBe(0n);
  });

  it('prices input read from the prompt cache at the cached-input price, else at the input price', () => {
    const price = { inputPrice: 3_000_000, outputPrice: 15_000_000, cachedInputPrice: 300_000 };
    // 900 uncached * 3 + 100 cached * 0.3 + 10 * 15 = 2,700 + 30 + 150 micro-dollars.
    expect(costOf(1000, 10, price, 100)).toBe(2_880n);
    expect(costOf(1000, 10, { ...price, cachedInputPrice: null }, 100)).toBe(3_150n);
    // More cached than prompt tokens (a confused upstream) never makes a negative count.
    expect(costOf(10, 0, price, 50)).toBe(3n);
  });

  it('stays exact where floating point would not', () => {
    const price = { inputPrice: 1_000_000_000, outputPrice: 1_000_000_000 };
    const tokens = 2_147_483_647;
    // 2 * 2^31-1 * 1e9 / 1e6 is beyond 2^53.
    expect(costOf(tokens, tokens, price)).toBe(4_294_967_294_000n);
    expect(costOf(3, 0, { inputPrice: 333_333, outputPrice: 0 })).toBe(1n);
    expect(costOf(3_000_001, 0, { inputPrice: 333_333, outputPrice: 0 })).toBe(1_000_000n);
  });
});
