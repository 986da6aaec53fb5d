/** Micro-dollars per million tokens, for the prompt and for the completion. */
export interface TokenPrice {
  inputPrice: number;
  outputPrice: number;
  /** Input read from a prompt cache; absent or null: the input price. */
  cachedInputPrice?: number | null;
}

const PER_MILLION = 1_000_000n;

/**
 * The cost of a request in micro-dollars:
 * `ceil((uncached * input + cached * cachedInput + completion * output) / 1e6)`, in BigInt
 * so no product loses a digit, rounded up so a request never costs nothing when it used
 * priced tokens. `cachedTokens` is the part of `promptTokens` read from a prompt cache.
 */
export function costOf(
  promptTokens: number,
  completionTokens: number,
  price: TokenPrice,
  cachedTokens = 0,
): bigint {
  const cached = Math.min(cachedTokens, promptTokens);
  const total =
    BigInt(promptTokens - cached) * BigInt(price.inputPrice) +
    BigInt(cached) * BigInt(price.cachedInputPrice ?? price.inputPrice) +
    BigInt(completionTokens) * BigInt(price.outputPrice);
  return (total + PER_MILLION - 1n) / PER_MILLION;
}
