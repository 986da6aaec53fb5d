import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from './processes.js';

// Checks that keep a convention fixed: a spec lists the repository's source files and the
// lines that break a rule, and expects none (docs/architecture.md, "Code layout and
// conventions").

export interface SourceQuery {
  /** Folders relative to the repository root, e.g. `apps`, `libs`, `bench/src`. */
  roots: string[];
  /** Also specs, fixtures and `testing/` helpers (default: production code only). */
  tests?: boolean;
}

const SKIPPED = new Set(['node_modules', 'dist', 'generated', 'coverage']);
const TEST_FILE = /\.(spec|fixture)\.tsx?$|(^|\/)testing\//;

/** TypeScript sources (`.ts` and `.tsx`) under `roots`, as paths relative to the repository root. */
export function sourceFiles({ roots, tests = false }: SourceQuery): string[] {
  const files: string[] = [];
  const walk = (relative: string): void => {
    for (const entry of readdirSync(path.join(repositoryRoot, relative), { withFileTypes: true })) {
      const child = path.posix.join(relative, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name)) walk(child);
      } else if (/\.tsx?$/.test(child) && !child.endsWith('.d.ts')) {
        if (tests || !TEST_FILE.test(child)) files.push(child);
      }
    }
  };
  roots.forEach(walk);
  return files.sort();
}

/** `path:line: text` for every line of `files` that matches one of `patterns`. */
export function linesMatching(files: readonly string[], patterns: readonly RegExp[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const lines = readFileSync(path.join(repositoryRoot, file), 'utf8').split('\n');
    lines.forEach((text, index) => {
      if (patterns.some((pattern) => pattern.test(text)))
        found.push(`${file}:${index + 1}: ${text.trim()}`);
    });
  }
  return found;
}
