import { memo } from 'preact/compat';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { onGrammarLoaded } from '../markdown/code-highlight.js';
import { renderMarkdown } from '../markdown/render-markdown.js';
import { sanitizeHtml } from '../markdown/sanitize-html.js';

/** A reply's Markdown as sanitised HTML. Memoised on its text, so while one reply streams
 * only that reply is parsed again, never the rest of the conversation. */
export const MarkdownContent = memo(function MarkdownContent(props: { source: string }) {
  const [grammars, setGrammars] = useState(0);
  useEffect(() => onGrammarLoaded(() => setGrammars((count) => count + 1)), []);
  const html = useMemo(() => sanitizeHtml(renderMarkdown(props.source)), [props.source, grammars]);
  return (
    <div
      class="message-text markdown"
      onClick={copyCode}
      dangerouslySetInnerHTML={{ __html: html }}
    />
  );
});

/** The copy buttons of code blocks are plain HTML inside the rendered reply: one
 * delegated handler serves them all. */
function copyCode(event: MouseEvent): void {
  const button = (event.target as Element | null)?.closest('button.copy-code');
  const code = button?.closest('.code-block')?.querySelector('code');
  if (!button || !code) return;
  navigator.clipboard.writeText(code.textContent ?? '').then(
    () => (button.textContent = 'Copied'),
    () => (button.textContent = 'Copy failed'),
  );
  setTimeout(() => (button.textContent = 'Copy code'), 2000);
}
