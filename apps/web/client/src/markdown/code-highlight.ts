import hljs from 'highlight.js/lib/core';

// Syntax highlighting with highlight.js, one language at a time: each grammar is its own
// chunk, fetched the first time a reply uses it, so the app's first load carries none.

type Grammar = Parameters<typeof hljs.registerLanguage>[1];
type GrammarModule = { default: Grammar };

const GRAMMARS: Record<string, () => Promise<GrammarModule>> = {
  bash: () => import('highlight.js/lib/languages/bash'),
  c: () => import('highlight.js/lib/languages/c'),
  cpp: () => import('highlight.js/lib/languages/cpp'),
  csharp: () => import('highlight.js/lib/languages/csharp'),
  css: () => import('highlight.js/lib/languages/css'),
  diff: () => import('highlight.js/lib/languages/diff'),
  go: () => import('highlight.js/lib/languages/go'),
  java: () => import('highlight.js/lib/languages/java'),
  javascript: () => import('highlight.js/lib/languages/javascript'),
  json: () => import('highlight.js/lib/languages/json'),
  kotlin: () => import('highlight.js/lib/languages/kotlin'),
  markdown: () => import('highlight.js/lib/languages/markdown'),
  php: () => import('highlight.js/lib/languages/php'),
  python: () => import('highlight.js/lib/languages/python'),
  ruby: () => import('highlight.js/lib/languages/ruby'),
  rust: () => import('highlight.js/lib/languages/rust'),
  sql: () => import('highlight.js/lib/languages/sql'),
  swift: () => import('highlight.js/lib/languages/swift'),
  typescript: () => import('highlight.js/lib/languages/typescript'),
  xml: () => import('highlight.js/lib/languages/xml'),
  yaml: () => import('highlight.js/lib/languages/yaml'),
};

const ALIASES: Record<string, string> = {
  sh: 'bash',
  shell: 'bash',
  zsh: 'bash',
  'c++': 'cpp',
  cs: 'csharp',
  golang: 'go',
  js: 'javascript',
  jsx: 'javascript',
  kt: 'kotlin',
  md: 'markdown',
  py: 'python',
  rb: 'ruby',
  rs: 'rust',
  ts: 'typescript',
  tsx: 'typescript',
  html: 'xml',
  svg: 'xml',
  yml: 'yaml',
};

const loading = new Map<string, Promise<void>>();
const listeners = new Set<() => void>();

/** Calls `listener` whenever a grammar has loaded, so views showing its code redraw. */
export function onGrammarLoaded(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function grammarName(language: string): string | undefined {
  const name = language.trim().toLowerCase();
  const canonical = ALIASES[name] ?? name;
  return canonical in GRAMMARS ? canonical : undefined;
}

function load(name: string): void {
  if (loading.has(name)) return;
  const grammar = GRAMMARS[name]!;
  loading.set(
    name,
    grammar()
      .then((module) => {
        hljs.registerLanguage(name, module.default);
        for (const listener of listeners) listener();
      })
      // A grammar that failed to load leaves its code plain; the next use tries again.
      .catch(() => void loading.delete(name)),
  );
}

/** Highlighted HTML for a code block, or '' (plain, escaped by markdown-it) while its
 * grammar is loading or when the language is unknown. */
export function highlightedCode(code: string, language: string): string {
  const name = grammarName(language);
  if (name === undefined) return '';
  if (!hljs.getLanguage(name)) {
    load(name);
    return '';
  }
  return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
}
