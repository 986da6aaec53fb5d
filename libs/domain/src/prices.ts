import { type TokenPrice } from './cost.js';
import {
  compareSpecificity,
  isWildcard,
  matchesModel,
  parseModelPattern,
  type ModelPatternKind,
} from './model-pattern.js';

export interface PriceEntry extends TokenPrice {
  /** An entry of the model pattern language: exact, `prefix*` or `*suffix`. */
  model: string;
}

export type PriceMatch = ModelPatternKind | 'default';

export interface ResolvedPrice extends TokenPrice {
  match: PriceMatch;
  /** The price table entry that applied; null for the default price. */
  entry: string | null;
}

/**
 * The price table in memory: the most specific matching entry applies, in the pattern
 * language's specificity order (docs/architecture.md, "Model patterns").
 */
export class PriceTable {
  private readonly exact = new Map<string, PriceEntry>();
  /** Most specific first, so the first match is the one that applies. */
  private readonly wildcards: PriceEntry[] = [];

  constructor(entries: readonly PriceEntry[]) {
    for (const entry of entries) {
      if (isWildcard(entry.model)) this.wildcards.push(entry);
      else this.exact.set(entry.model, entry);
    }
    this.wildcards.sort((a, b) => compareSpecificity(a.model, b.model));
  }

  get size(): number {
    return this.exact.size + this.wildcards.length;
  }

  find(model: string): ResolvedPrice | undefined {
    const exact = this.exact.get(model);
    if (exact) return resolved(exact);
    return resolved(this.wildcards.find((entry) => matchesModel(entry.model, model)));
  }
}

function resolved(entry: PriceEntry | undefined): ResolvedPrice | undefined {
  if (!entry) return undefined;
  return {
    inputPrice: entry.inputPrice,
    outputPrice: entry.outputPrice,
    ...(entry.cachedInputPrice != null ? { cachedInputPrice: entry.cachedInputPrice } : {}),
    match: parseModelPattern(entry.model).kind,
    entry: entry.model,
  };
}
