// A failure from an API answering `{"error": {"code", "message", "fields"?}}`, as the UI shows it.

export interface FieldProblem {
  field: string;
  message: string;
}

export interface Problem {
  status?: number;
  code: string;
  message: string;
  fields?: FieldProblem[];
}

/** Anything thrown, as a problem to show. */
export function asProblem(error: unknown): Problem {
  if (typeof error === 'object' && error !== null && 'code' in error && 'message' in error) {
    const candidate = error as Partial<Problem>;
    if (typeof candidate.code === 'string' && typeof candidate.message === 'string') {
      return candidate as Problem;
    }
  }
  return { code: 'client_error', message: error instanceof Error ? error.message : String(error) };
}

/** The first message for each field the API named, to show beside that field. */
export function fieldErrors(error: unknown): Record<string, string> {
  if (error === null || error === undefined) return {};
  const byField: Record<string, string> = {};
  for (const { field, message } of asProblem(error).fields ?? []) byField[field] ??= message;
  return byField;
}
