import { onGrammarLoaded } from './code-highlight.js';
import { renderMarkdown } from './render-markdown.js';

// What a reply's Markdown becomes before sanitising; the browser suite (test/web) proves
// the sanitised result in Chromium.

describe('renderMarkdown', () => {
  it('renders CommonMark with GFM tables, task lists, strikethrough and autolinks', () => {
    const html = renderMarkdown(
      [
        '# Title',
        '',
        '**bold** and ~~gone~~, see https://example.com',
        '',
        '| a | b |',
        '|---|---|',
        '| 1 | 2 |',
        '',
        '- [x] done',
        '- [ ] open',
      ].join('\n'),
    );
    expect(html).toContain('<h1>Title</h1>');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('<s>gone</s>');
    expect(html).toContain('<a href="https://example.com">https://example.com</a>');
    expect(html).toMatch(/<table>[\s\S]*<th>a<\/th>[\s\S]*<td>2<\/td>/);
    expect(html).toMatch(/<input[^>]*type="checkbox"[^>]*checked/);
    expect(html.match(/type="checkbox"/g)).toHaveLength(2);
  });

  it('gives task-list checkboxes ids that two replies on one page never share', () => {
    const ids = (html: string) => [...html.matchAll(/id="([^"]+)"/g)].map((match) => match[1]);
    const first = ids(renderMarkdown('- [ ] a\n- [x] b'));
    const second = ids(renderMarkdown('- [ ] a'));
    expect(first).toHaveLength(2);
    expect(new Set([...first, ...second]).size).toBe(3);
  });

  it('shows raw HTML as text and refuses script links', () => {
    const html = renderMarkdown(
      '<img src=x onerror=alert(1)> [click](javascript:alert(1)) <script>alert(2)</script>',
    );
    expect(html).not.toMatch(/<img|<script|href="javascript/i);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('[click](javascript:alert(1))');
  });

  it('renders TeX as MathML, inline and displayed', () => {
    const html = renderMarkdown('Euler: $e^{i\\pi}+1=0$\n\n$$\\frac{a}{b}$$');
    expect(html).toMatch(/<math[^>]*>[\s\S]*<mi>e<\/mi>/);
    expect(html).toMatch(/<math[^>]*display="block"[\s\S]*<mfrac>/);
    expect(html).not.toContain('style=');
  });

  it('puts fenced code in a block with a copy button and highlights it once its grammar loaded', async () => {
    const source = '```python\ndef answer():\n    return 42\n```';
    const loaded = new Promise<void>((resolve) => {
      const stop = onGrammarLoaded(() => {
        stop();
        resolve();
      });
    });
    const first = renderMarkdown(source);
    expect(first).toContain('<div class="code-block"><pre><code class="language-python">');
    expect(first).toContain('<button type="button" class="copy-code secondary">Copy code</button>');
    expect(first).not.toContain('hljs-keyword');
    await loaded;
    expect(renderMarkdown(source)).toContain('<span class="hljs-keyword">def</span>');
  });

  it('leaves code in an unknown language plain and escaped', () => {
    const html = renderMarkdown('```nosuchlang\n<b>x</b>\n```');
    expect(html).toContain('&lt;b&gt;x&lt;/b&gt;');
    expect(html).not.toContain('hljs');
  });
});
