// What a reply costs in credits (docs/credits.md, "Prices" and "Freeze and settle").

/** A chat model's price: per call plus per thousand input and output tokens. */
export interface CreditPrice {
  perCall: number;
  per1kInput: number;
  per1kOutput: number;
}

export const FREE: CreditPrice = { perCall: 0, per1kInput: 0, per1kOutput: 0 };

/** The most output tokens a priced reply may have: sent as `max_tokens`, frozen in advance. */
export const OUTPUT_CAP_TOKENS = 4096;

/** Tokens counted for each attached image when freezing, more than a detailed image costs. */
const TOKENS_PER_IMAGE = 2000;
/** The role and separators each message adds. */
const TOKENS_PER_MESSAGE = 8;

export function isFree(price: CreditPrice): boolean {
  return price.perCall === 0 && price.per1kInput === 0 && price.per1kOutput === 0;
}

/** The cost of one call with this usage; each token part is rounded up to a whole credit. */
export function costOf(price: CreditPrice, inputTokens: number, outputTokens: number): number {
  return (
    price.perCall +
    Math.ceil((inputTokens * price.per1kInput) / 1000) +
    Math.ceil((outputTokens * price.per1kOutput) / 1000)
  );
}

/**
 * At least as many input tokens as the prompt can have: a byte-level tokenizer never makes
 * a token of less than one byte, so the UTF-8 length bounds the text's tokens.
 */
export function inputTokensAtMost(texts: string[], images: number): number {
  let tokens = images * TOKENS_PER_IMAGE;
  for (const text of texts) tokens += Buffer.byteLength(text, 'utf8') + TOKENS_PER_MESSAGE;
  return tokens;
}

/** The worst-case cost of a call with this prompt: what is frozen before it. */
export function worstCase(price: CreditPrice, texts: string[], images: number): number {
  const output = price.per1kOutput > 0 ? OUTPUT_CAP_TOKENS : 0;
  return costOf(price, price.per1kInput > 0 ? inputTokensAtMost(texts, images) : 0, output);
}
