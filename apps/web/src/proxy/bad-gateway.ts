import { ApiError } from '@switchyard/contracts';

// The answer when the chat backend cannot be reached (docs/specification.md, "Errors": a
// 502 saying to check that the API container is running): JSON for API clients, a page
// for people.

interface MediaRange {
  type: string;
  quality: number;
}

function parseAccept(accept: string): MediaRange[] {
  return accept
    .split(',')
    .map((part) => {
      const [type = '', ...parameters] = part.split(';').map((piece) => piece.trim());
      const q = parameters.find((parameter) => /^q=/i.test(parameter));
      const quality = q === undefined ? 1 : Number(q.slice(2));
      return { type: type.toLowerCase(), quality: Number.isFinite(quality) ? quality : 0 };
    })
    .filter((range) => range.type !== '');
}

/**
 * True when the client asks for HTML by name and likes it at least as much as JSON
 * (a browser navigating). `*\/*` alone, as curl and SDKs send, means JSON.
 */
export function prefersHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const ranges = parseAccept(accept);
  const html = ranges.find((range) => range.type === 'text/html');
  if (html === undefined || html.quality <= 0) return false;
  const json = ranges.find((range) => range.type === 'application/json');
  return json === undefined || html.quality >= json.quality;
}

export const BAD_GATEWAY_MESSAGE =
  'The chat service (API container) cannot be reached. Check that the API container is running, then try again.';

export function badGatewayError(): ApiError {
  return new ApiError('bad_gateway', BAD_GATEWAY_MESSAGE);
}

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (character) =>
      ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character] ??
      character,
  );

export function badGatewayPage(requestId: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>502 Bad Gateway: chat service unavailable</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:2rem 1rem;color:#1b1f24;background:#f6f7f9}
main{max-width:36rem;margin:0 auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:1.5rem}
h1{font-size:1.4rem;margin-top:0}code{background:#eef1f4;padding:0 .25em;border-radius:4px}
a{color:#0b5cad}
@media (prefers-color-scheme:dark){body{background:#0d1117;color:#e6edf3}main{background:#161b22;border-color:#30363d}code{background:#30363d}a{color:#6cb6ff}}
</style>
</head>
<body>
<main>
<h1>502 Bad Gateway</h1>
<p>The web app is running, but the chat service behind it (the API container) cannot be reached.</p>
<p><strong>Check that the API container is running</strong>, then <a href="">try again</a> or go back to the <a href="/">chat home page</a>.</p>
<p>Request id: <code>${escapeHtml(requestId)}</code></p>
</main>
</body>
</html>
`;
}
