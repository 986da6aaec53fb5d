import { katex } from '@mdit/plugin-katex';
import { tasklist } from '@mdit/plugin-tasklist';
import MarkdownIt from 'markdown-it';
import { highlightedCode } from './code-highlight.js';

// A model's reply as HTML: CommonMark with GFM tables, strikethrough, task lists and
// autolinks; TeX math between `$…$` / `$$…$$`; fenced code highlighted once its language
// has loaded. Raw HTML in a reply is shown as text (html: false) and markdown-it refuses
// `javascript:`, `vbscript:`, `file:` and non-image `data:` links; the caller still
// sanitises the result (sanitize-html.ts), since this output goes into the page as HTML.

const markdown: MarkdownIt = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: true,
  highlight: (code, language) => highlightedCode(code, language),
})
  .use(tasklist, { disabled: true })
  // MathML only: Chromium, Firefox and Safari draw it natively, and KaTeX's HTML output
  // needs inline style attributes that the page's content security policy forbids.
  .use(katex, { output: 'mathml', throwOnError: false });

/** Fenced code gets a copy button; the message view handles its clicks (copy-code.ts). */
const fence = markdown.renderer.rules.fence!;
markdown.renderer.rules.fence = (tokens, index, options, env, self) =>
  `<div class="code-block">${fence(tokens, index, options, env, self)}` +
  '<button type="button" class="copy-code secondary">Copy code</button></div>';

/** Task-list checkboxes get ids for their labels: counted across renders, so two replies
 * on one page never share one. */
let nextTaskId = 0;

export function renderMarkdown(source: string): string {
  const env = { tasklistId: nextTaskId };
  const html = markdown.render(source, env);
  nextTaskId = env.tasklistId;
  return html;
}
