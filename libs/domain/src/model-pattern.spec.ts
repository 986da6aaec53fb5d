import { linesMatching, query, sourceFiles } from '@switchyard/testing';
import {
  compareSpecificity,
  coveredByList,
  isModelName,
  isModelPattern,
  matchesModel,
  MAX_MODEL_LENGTH,
  modelMatchSql,
  mostSpecificMatch,
  parseModelPattern,
} from './model-pattern.js';

// The definition of the model pattern language: every rule is a row of these tables, and
// the matching table is run against both implementations (TypeScript and SQL).

const long = 'm'.repeat(MAX_MODEL_LENGTH);

/** [entry, accepted, kind it is read as] */
const ENTRIES: [string, boolean, 'exact' | 'prefix' | 'suffix'][] = [
  ['gpt-4o', true, 'exact'],
  ['gpt-4-gizmo-*', true, 'prefix'],
  ['*-all', true, 'suffix'],
  ['a*', true, 'prefix'],
  ['*a', true, 'suffix'],
  [long, true, 'exact'],
  [`${long.slice(1)}*`, true, 'prefix'],
  [`${long}*`, false, 'prefix'],
  ['*', false, 'exact'],
  ['**', false, 'exact'],
  ['*gpt*', false, 'exact'],
  ['gpt*4', false, 'exact'],
  ['gpt-4o*mini*', false, 'exact'],
  ['', false, 'exact'],
  ['gpt 4o', false, 'exact'],
  ['gpt-4o\n', false, 'exact'],
  ['gpt-*\t', false, 'exact'],
];

/** [entry, model, matches] */
const MATCHES: [string, string, boolean][] = [
  ['gpt-4o', 'gpt-4o', true],
  ['gpt-4o', 'gpt-4o-mini', false],
  ['gpt-4o', 'GPT-4o', false],
  ['gpt-4o', 'gpt-4', false],
  ['gpt-4-gizmo-*', 'gpt-4-gizmo-g-abc', true],
  ['gpt-4-gizmo-*', 'gpt-4-gizmo-', true],
  ['gpt-4-gizmo-*', 'gpt-4-gizmo', false],
  ['gpt-4-gizmo-*', 'x-gpt-4-gizmo-g', false],
  ['*-all', 'gpt-4-all', true],
  ['*-all', '-all', true],
  ['*-all', 'gpt-4-all-2', false],
  ['*-all', 'all', false],
  ['*-all', 'al', false],
  // Refused entries stored before the language: exact names no model name can equal.
  ['*', 'gpt-4o', false],
  ['**', 'gpt-4o', false],
  ['*gpt*', 'a-gpt-b', false],
  ['gpt*4', 'gpt-4', false],
];

/** Entries, most specific first: sorting any permutation by specificity gives this order. */
const SPECIFICITY = ['gpt-4o-mini', 'gpt-4o-mi*', '*4o-mini', 'gpt-4o*', 'gpt-4*', '*mini', 'g*'];

describe('model pattern language', () => {
  it.each(ENTRIES)('entry %j: accepted %s, read as %s', (entry, accepted, kind) => {
    expect(isModelPattern(entry)).toBe(accepted);
    expect(parseModelPattern(entry).kind).toBe(kind);
  });

  it('accepts as a model name only what an exact entry accepts', () => {
    for (const [entry, accepted, kind] of ENTRIES) {
      expect(isModelName(entry)).toBe(accepted && kind === 'exact');
    }
    expect(isModelName(`${long}x`)).toBe(false);
    expect(isModelName(42)).toBe(false);
    expect(isModelPattern(null)).toBe(false);
  });

  it.each(MATCHES)('entry %j, model %j: matches %s', (entry, model, expected) => {
    expect(matchesModel(entry, model)).toBe(expected);
  });

  it('orders entries by specificity: exact, longer fixed part, prefix before suffix', () => {
    const shuffled = [...SPECIFICITY].reverse();
    expect(shuffled.sort(compareSpecificity)).toEqual(SPECIFICITY);
    expect(['*abc', 'abc*'].sort(compareSpecificity)).toEqual(['abc*', '*abc']);
    expect(['gpt-4*', 'gpt-3*'].sort(compareSpecificity)).toEqual(['gpt-3*', 'gpt-4*']);
  });

  it('says whether a list covers every model an entry names', () => {
    const team = ['gpt-4o', 'claude-*', '*-mini'];
    expect(coveredByList([], 'anything*')).toBe(true);
    expect(coveredByList(team, 'gpt-4o')).toBe(true);
    expect(coveredByList(team, 'claude-3-opus')).toBe(true);
    expect(coveredByList(team, 'claude-3*')).toBe(true);
    expect(coveredByList(team, 'o4-mini')).toBe(true);
    expect(coveredByList(team, '*o4-mini')).toBe(true);
    expect(coveredByList(team, 'gpt-4o*')).toBe(false);
    expect(coveredByList(team, 'cl*')).toBe(false);
    expect(coveredByList(team, '*mini')).toBe(false);
    expect(coveredByList(team, 'gpt-4')).toBe(false);
  });

  it('picks the most specific matching entry', () => {
    expect(mostSpecificMatch(SPECIFICITY, 'gpt-4o-mini')).toBe('gpt-4o-mini');
    expect(mostSpecificMatch(SPECIFICITY, 'gpt-4o-mini-2024')).toBe('gpt-4o-mi*');
    expect(mostSpecificMatch(SPECIFICITY, 'o1-4o-mini')).toBe('*4o-mini');
    expect(mostSpecificMatch(SPECIFICITY, 'gpt-4-turbo')).toBe('gpt-4*');
    expect(mostSpecificMatch(SPECIFICITY, 'claude-mini')).toBe('*mini');
    expect(mostSpecificMatch(SPECIFICITY, 'other')).toBeUndefined();
  });

  it('matches in Postgres exactly as in TypeScript', async () => {
    const rows = await query<{ index: number; matches: boolean }>(
      process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres',
      `SELECT c.index::int, ${modelMatchSql('c.entry', 'c.model')} AS matches
         FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS c(entry, model, index)
        ORDER BY c.index`,
      [MATCHES.map(([entry]) => entry), MATCHES.map(([, model]) => model)],
    );
    expect(rows.map((row) => row.matches)).toEqual(MATCHES.map(([, , expected]) => expected));
  });
});

// The language has one implementation: a wildcard test written anywhere else is a second
// one that will drift (docs/architecture.md, "Model patterns").
const REIMPLEMENTED_WILDCARD = [
  /\b(endsWith|startsWith)\(\s*['"`]\*['"`]\s*\)/,
  /\b(right|left)\([^)]*,\s*1\)\s*=\s*'\*'/i,
];

describe('model pattern language, one implementation', () => {
  it('recognises a wildcard test written by hand', () => {
    expect(REIMPLEMENTED_WILDCARD.some((p) => p.test("m.endsWith('*')"))).toBe(true);
    expect(REIMPLEMENTED_WILDCARD.some((p) => p.test('entry.startsWith("*")'))).toBe(true);
    expect(REIMPLEMENTED_WILDCARD.some((p) => p.test("right(p.model, 1) = '*'"))).toBe(true);
    expect(REIMPLEMENTED_WILDCARD.some((p) => p.test("name.endsWith('-all')"))).toBe(false);
  });

  it('has no second implementation in production code', () => {
    const files = sourceFiles({ roots: ['apps', 'libs'] }).filter(
      (file) => file !== 'libs/domain/src/model-pattern.ts',
    );
    expect(linesMatching(files, REIMPLEMENTED_WILDCARD)).toEqual([]);
  });
});
