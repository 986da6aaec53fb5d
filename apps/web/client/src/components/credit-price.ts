/** A model's price in credits (docs/credits.md, "Prices"). */
export interface PriceFields {
  creditsPerCall?: number;
  creditsPer1kInput?: number;
  creditsPer1kOutput?: number;
}

/** The price said briefly, for the model picker: "free", "10 credits a call", … */
export function priceLabel(model: PriceFields): string {
  const perCall = model.creditsPerCall ?? 0;
  const input = model.creditsPer1kInput ?? 0;
  const output = model.creditsPer1kOutput ?? 0;
  if (perCall === 0 && input === 0 && output === 0) return 'free';
  const parts: string[] = [];
  if (perCall > 0) parts.push(`${perCall} credit${perCall === 1 ? '' : 's'} a call`);
  if (input > 0 || output > 0) parts.push(`${input} in / ${output} out per 1k tokens`);
  return parts.join(' + ');
}
