import { type TokenPrice } from './cost.js';

export interface PriceEntry extends TokenPrice {
  /** An exact model name, or a prefix ending in `*`. */
  model: string;
}

export type PriceMatch = 'exact' | 'prefix' | 'default';

export interface ResolvedPrice extends TokenPrice {
  match: PriceMatch;
  /** The price table entry that applied; null for the default price. */
  entry: string | null;
}

/** The price table in memory: exact names first, then the longest matching prefix. */
export class PriceTable {
  private readonly exact = new Map<string, PriceEntry>();
  /** Longest first, so the first match is the most specific. */
  private readonly prefixes: { prefix: string; entry: PriceEntry }[] = [];

  constructor(entries: readonly PriceEntry[]) {
    for (const entry of entries) {
      if (entry.model.endsWith('*')) {
        this.prefixes.push({ prefix: entry.model.slice(0, -1), entry });
      } else {
        this.exact.set(entry.model, entry);
      }
    }
    this.prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
  }

  get size(): number {
    return this.exact.size + this.prefixes.length;
  }

  find(model: string): ResolvedPrice | undefined {
    const exact = this.exact.get(model);
    if (exact) return resolved(exact, 'exact');
    const prefixed = this.prefixes.find(({ prefix }) => model.startsWith(prefix));
    return prefixed ? resolved(prefixed.entry, 'prefix') : undefined;
  }
}

function resolved(entry: PriceEntry, match: PriceMatch): ResolvedPrice {
  return {
    inputPrice: entry.inputPrice,
    outputPrice: entry.outputPrice,
    ...(entry.cachedInputPrice != null ? { cachedInputPrice: entry.cachedInputPrice } : {}),
    match,
    entry: entry.model,
  };
}
