import DOMPurify from 'dompurify';

// Every reply's HTML passes DOMPurify before it reaches the page: the Markdown renderer
// already escapes raw HTML, this is the second wall. Links open in a new tab without
// giving that tab a handle on this one.

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

export function sanitizeHtml(html: string): string {
  return DOMPurify.sanitize(html, {
    USE_PROFILES: { html: true, mathMl: true },
    ADD_ATTR: ['target'],
    FORBID_TAGS: ['style', 'form'],
  });
}
