/** Micro-dollars per million tokens, for the prompt and for the completion. */
export interface TokenPrice {
  inputPrice: number;
  outputPrice: number;
}

const PER_MILLION = 1_000_000n;

/**
 * The cost of a request in micro-dollars: `ceil((prompt * input + completion * output) / 1e6)`,
 * in BigInt so no product loses a digit, rounded up so a request never costs nothing when
 * it used priced tokens.
 */
export function costOf(promptTokens: number, completionTokens: number, price: TokenPrice): bigint {
  const total =
    BigInt(promptTokens) * BigInt(price.inputPrice) +
    BigInt(completionTokens) * BigInt(price.outputPrice);
  return (total + PER_MILLION - 1n) / PER_MILLION;
}
