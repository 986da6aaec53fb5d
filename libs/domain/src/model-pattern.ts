// The model pattern language (docs/architecture.md, "Model patterns"): the one definition
// of how an entry of a channel's, a token's or the price table's model list names models.
// Its table of cases is model-pattern.spec.ts, run against this code and the SQL below.
//
// - `gpt-4o`: exactly that model.
// - `gpt-4-gizmo-*`: every model starting with `gpt-4-gizmo-` (custom assistants).
// - `*-all`: every model ending in `-all` (reverse-engineered models).
// - A lone `*`, `*x*`, `a*b`, `**` are refused: "every model" is an empty list where a list
//   allows it (tokens), and there is no case where it should be typed by mistake.
//
// Entries stored before this language (a lone `*` was once accepted by the admin) are read
// as exact names, which no model name can equal: they match nothing rather than everything.

export const MAX_MODEL_LENGTH = 128;

/** Printable, no whitespace; `*` is only the wildcard at one end of a pattern. */
const NAME_CHARACTERS = /^[^\s*\p{Cc}]+$/u;

export type ModelPatternKind = 'exact' | 'prefix' | 'suffix';

export interface ModelPattern {
  entry: string;
  kind: ModelPatternKind;
  /** The fixed part: the whole name, or the entry without its `*`. */
  literal: string;
}

export const MODEL_NAME_RULE = `a model name of at most ${MAX_MODEL_LENGTH} characters, without spaces or *`;
export const MODEL_PATTERN_RULE = `a model name, a prefix ending in * (gpt-4-gizmo-*) or a suffix starting with * (*-all), at most ${MAX_MODEL_LENGTH} characters without spaces; * alone is not a pattern`;

/** An exact model name, as a client sends it in `model`. */
export function isModelName(value: unknown): value is string {
  return (
    typeof value === 'string' && value.length <= MAX_MODEL_LENGTH && NAME_CHARACTERS.test(value)
  );
}

/** An entry the language accepts: exact, `prefix*` or `*suffix`, never a lone `*`. */
export function isModelPattern(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > MAX_MODEL_LENGTH) return false;
  return NAME_CHARACTERS.test(parseModelPattern(value).literal);
}

/** Reads an entry; anything that is not a valid prefix or suffix is an exact name. */
export function parseModelPattern(entry: string): ModelPattern {
  if (entry.length > 1) {
    const head = entry.slice(0, -1);
    if (entry.endsWith('*') && !head.includes('*')) {
      return { entry, kind: 'prefix', literal: head };
    }
    const tail = entry.slice(1);
    if (entry.startsWith('*') && !tail.includes('*')) {
      return { entry, kind: 'suffix', literal: tail };
    }
  }
  return { entry, kind: 'exact', literal: entry };
}

export function isWildcard(entry: string): boolean {
  return parseModelPattern(entry).kind !== 'exact';
}

export function matchesModel(entry: string, model: string): boolean {
  const { kind, literal } = parseModelPattern(entry);
  if (kind === 'prefix') return model.startsWith(literal);
  if (kind === 'suffix') return model.endsWith(literal);
  return literal === model;
}

/** True when `model` is allowed by a list where empty means "every model" (tokens). */
export function allowedByList(list: readonly string[], model: string): boolean {
  return list.length === 0 || list.some((entry) => matchesModel(entry, model));
}

/**
 * True when every model `entry` matches is allowed by `list` (empty = every model): a
 * member's token may name only models its team allows (docs/teams.md, "Member tokens").
 * An exact entry is covered when the list allows that name; a `prefix*` by a list prefix
 * it starts with; a `*suffix` by a list suffix it ends with.
 */
export function coveredByList(list: readonly string[], entry: string): boolean {
  if (list.length === 0) return true;
  const wanted = parseModelPattern(entry);
  if (wanted.kind === 'exact') return allowedByList(list, wanted.literal);
  return list.some((allowed) => {
    const have = parseModelPattern(allowed);
    return (
      have.kind === wanted.kind &&
      (wanted.kind === 'prefix'
        ? wanted.literal.startsWith(have.literal)
        : wanted.literal.endsWith(have.literal))
    );
  });
}

const KIND_RANK: Record<ModelPatternKind, number> = { exact: 0, prefix: 1, suffix: 2 };

/**
 * Specificity order, most specific first: an exact name; then the wildcard with the longer
 * fixed part; at equal length a prefix before a suffix; then by entry, so the order is total
 * and two replicas never pick differently.
 */
export function compareSpecificity(a: string, b: string): number {
  const left = parseModelPattern(a);
  const right = parseModelPattern(b);
  if ((left.kind === 'exact') !== (right.kind === 'exact')) return left.kind === 'exact' ? -1 : 1;
  return (
    right.literal.length - left.literal.length ||
    KIND_RANK[left.kind] - KIND_RANK[right.kind] ||
    (a < b ? -1 : a > b ? 1 : 0)
  );
}

/** The most specific entry of `entries` that matches `model`, if any. */
export function mostSpecificMatch(entries: Iterable<string>, model: string): string | undefined {
  let best: string | undefined;
  for (const entry of entries) {
    if (matchesModel(entry, model) && (best === undefined || compareSpecificity(entry, best) < 0))
      best = entry;
  }
  return best;
}

/**
 * The same matching as a Postgres boolean expression. `entry` and `model` are SQL
 * expressions written by the caller (a column, `unnest` alias or CTE column), never user
 * input: values reach the query as bound parameters.
 */
export function modelMatchSql(entry: string, model: string): string {
  return `(
    (length(${entry}) > 1 AND right(${entry}, 1) = '*' AND strpos(left(${entry}, -1), '*') = 0
      AND starts_with(${model}, left(${entry}, -1)))
    OR (length(${entry}) > 1 AND left(${entry}, 1) = '*' AND strpos(substr(${entry}, 2), '*') = 0
      AND right(${model}, length(${entry}) - 1) = substr(${entry}, 2))
    OR ${entry} = ${model}
  )`;
}
