import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { repositoryRoot } from '@switchyard/testing';

// Every citation of the documentation points at something that exists: code comments and
// docs say "docs/providers.md, "Anthropic's API in front"" or link a file, and a section
// renamed or a file moved leaves readers at a dead end. This lists what is cited where and
// expects nothing missing.

const SKIPPED = new Set(['node_modules', 'dist', 'generated', 'coverage', 'output', 'var']);
const CITING = /\.(ts|tsx|mts|mjs|md|ya?ml|conf|sh|json)$|(^|\/)Dockerfile$/;
const read = (file: string) => readFileSync(path.join(repositoryRoot, file), 'utf8');

function walk(relative: string, files: string[]): string[] {
  for (const entry of readdirSync(path.join(repositoryRoot, relative), { withFileTypes: true })) {
    if (entry.name.startsWith('.') && entry.name !== '.ci') continue;
    const child = relative ? path.posix.join(relative, entry.name) : entry.name;
    if (entry.isDirectory()) {
      if (!SKIPPED.has(entry.name)) walk(child, files);
    } else if (CITING.test(child) && !child.endsWith('pnpm-lock.yaml')) files.push(child);
  }
  return files;
}

const files = walk('', []);
const markdown = files.filter((file) => file.endsWith('.md'));

/** The text of every Markdown heading of a doc. */
function headings(doc: string): string[] {
  return [...read(doc).matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((match) => match[1] ?? '');
}

/** GitHub's anchor for a heading. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');

/**
 * A section is cited by its heading, or by the heading's words before a colon or
 * parenthesis ("Metering" for "## Metering: the usage worker").
 */
const hasSection = (doc: string, section: string) =>
  headings(doc).some(
    (heading) =>
      heading === section ||
      heading.startsWith(`${section}:`) ||
      heading.startsWith(`${section} (`),
  );

interface Citation {
  where: string;
  doc: string;
  section?: string;
  anchor?: string;
}

function citations(): Citation[] {
  const found: Citation[] = [];
  const pattern = /\bdocs\/([a-z0-9-]+\.md)(?:, "([^"]+)"|#([a-z0-9-]+))?/g;
  for (const file of files) {
    read(file)
      .split('\n')
      .forEach((line, index) => {
        for (const match of line.matchAll(pattern)) {
          // A path under another project's docs (a URL, a package's own folder) is not ours.
          const before = line.slice(0, match.index);
          if (/[\w.-]\/$|:\/\/\S*$/.test(before)) continue;
          found.push({
            where: `${file}:${index + 1}`,
            doc: `docs/${match[1]}`,
            section: match[2],
            anchor: match[3],
          });
        }
      });
  }
  return found;
}

/** Repository paths a doc names in backticks, e.g. `apps/edge/src/proxy/relay.ts`. */
function citedPaths(): { where: string; cited: string }[] {
  const found: { where: string; cited: string }[] = [];
  const pattern = /`((?:apps|libs|test|deploy|bench|prisma|scripts|docs)\/[^`\s*<>{}]+)`/g;
  for (const doc of markdown) {
    read(doc)
      .split('\n')
      .forEach((line, index) => {
        for (const match of line.matchAll(pattern)) {
          const cited = (match[1] ?? '').replace(/:\d+$/, '').replace(/\/$/, '');
          found.push({ where: `${doc}:${index + 1}`, cited });
        }
      });
  }
  return found;
}

describe('citations of the docs', () => {
  const all = citations();

  it('finds the citations', () => {
    expect(all.length).toBeGreaterThan(50);
    expect(all.filter((citation) => citation.section).length).toBeGreaterThan(20);
  });

  it('cites only docs that exist', () => {
    const missing = all.filter(({ doc }) => !existsSync(path.join(repositoryRoot, doc)));
    expect(missing.map(({ where, doc }) => `${where}: ${doc}`)).toEqual([]);
  });

  it('cites only sections that exist', () => {
    const missing = all.filter(
      ({ doc, section, anchor }) =>
        existsSync(path.join(repositoryRoot, doc)) &&
        ((section !== undefined && !hasSection(doc, section)) ||
          (anchor !== undefined && !headings(doc).map(slug).includes(anchor))),
    );
    expect(
      missing.map(
        ({ where, doc, section, anchor }) => `${where}: ${doc} ${section ?? `#${anchor}`}`,
      ),
    ).toEqual([]);
  });

  it('names only repository files that exist', () => {
    const missing = citedPaths().filter(
      ({ cited }) => !existsSync(path.join(repositoryRoot, cited)),
    );
    expect(missing.map(({ where, cited }) => `${where}: ${cited}`)).toEqual([]);
  });
});
