import { asProblem, type FieldProblem, type Problem } from './problem.js';

/** What a failure means to the person looking at it, and what to do about it. */
export interface Words {
  title: string;
  /** What to do about it. */
  hint?: string;
}

/**
 * An app's words for the failures its API names: by stable code first, then by HTTP status
 * for the codes that say nothing more than it (a 403 the dashboard explains by role).
 */
export interface Vocabulary {
  codes: Record<string, Words>;
  statuses?: Record<number, Words>;
}

export interface Explanation extends Words {
  /** The provider address to report, for upstream failures. */
  address?: string;
  /** The server's own words, when they add something to the title. */
  detail?: string;
  /** What is wrong with each field the API named. */
  fields?: FieldProblem[];
}

/**
 * Anything thrown, in words for the person looking: the app's title and hint for a known
 * code, else the server's own message; the server's message is kept as detail when it
 * says more, and the per-field errors are kept to list.
 */
export function explain(error: unknown, vocabulary: Vocabulary): Explanation {
  const problem: Problem = asProblem(error);
  const known =
    vocabulary.codes[problem.code] ??
    (problem.status === undefined ? undefined : vocabulary.statuses?.[problem.status]);
  const title = known?.title ?? (problem.message || 'Something went wrong.');
  const detail =
    known && problem.message && problem.message !== known.title ? problem.message : undefined;
  return {
    title,
    ...(known?.hint ? { hint: known.hint } : {}),
    ...(problem.address ? { address: problem.address } : {}),
    ...(detail ? { detail } : {}),
    ...(problem.fields && problem.fields.length > 0 ? { fields: problem.fields } : {}),
  };
}
