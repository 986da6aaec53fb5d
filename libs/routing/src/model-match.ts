// Model names are matched exactly, or by a wildcard entry so that one entry serves a
// family (seed §1.5): a trailing `*` names a prefix (`gpt-4-gizmo-*`, custom assistants),
// a leading `*` a suffix (`*-all`, reverse-engineered models).

export function isWildcard(entry: string): boolean {
  return entry.length > 1 && (entry.endsWith('*') || entry.startsWith('*'));
}

export function matchesModel(entry: string, model: string): boolean {
  if (entry.length > 1 && entry.endsWith('*')) return model.startsWith(entry.slice(0, -1));
  if (entry.length > 1 && entry.startsWith('*')) return model.endsWith(entry.slice(1));
  return entry === model;
}

/** True when `model` is allowed by a list where empty means "everything". */
export function allowedByList(list: readonly string[], model: string): boolean {
  return list.length === 0 || list.some((entry) => matchesModel(entry, model));
}
