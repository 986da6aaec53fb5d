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

/** Model names are the client's to choose: the memo of resolved names stays bounded. */
const MAX_MEMO = 10_000;

/**
 * The price table in memory: the most specific matching entry applies, in the pattern
 * language's specificity order (docs/architecture.md, "Model patterns"). A request is
 * priced by `priceFor`, the one rule the edge's holds and metering's charges share
 * (docs/architecture.md, "Prices").
 */
export class PriceTable {
  private readonly exact = new Map<string, PriceEntry>();
  /** Most specific first, so the first match is the one that applies. */
  private readonly wildcards: PriceEntry[] = [];
  /** Pattern matching once per model name and table: the edge asks for every request. */
  private readonly memo = new Map<string, ResolvedPrice | null>();

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

  /** The entry one model name resolves to, whatever the request. */
  find(model: string): ResolvedPrice | undefined {
    let price = this.memo.get(model);
    if (price === undefined) {
      price =
        resolved(
          this.exact.get(model) ?? this.wildcards.find((e) => matchesModel(e.model, model)),
        ) ?? null;
      if (this.memo.size >= MAX_MEMO) this.memo.clear();
      this.memo.set(model, price);
    }
    return price ?? undefined;
  }

  /**
   * The price of a request: its requested model's entry, else the entry of the model the
   * upstream served it as (a channel's mapping of an alias the table does not list);
   * undefined when neither has one (metering then bills DEFAULT_MODEL_PRICE).
   */
  priceFor(requested: string, upstream: string | null): ResolvedPrice | undefined {
    return this.find(requested) ?? (upstream !== null ? this.find(upstream) : undefined);
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
