// Custom assistants (docs/specification.md, "Model access"): their model name is a fixed
// prefix followed by the assistant's id, the `g-…` path segment after `/g/` in its public
// link, e.g. https://chatgpt.com/g/g-abc123XYZ-travel-guide?model=gpt-4 →
// gpt-4-gizmo-g-abc123XYZ-travel-guide

export type AssistantLinkResult = { ok: true; id: string } | { ok: false; reason: string };

const ASSISTANT_ID = /^g-[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** The assistant id of a public link, or why the link has none. */
export function assistantIdOf(link: string): AssistantLinkResult {
  let url: URL;
  try {
    url = new URL(link.trim());
  } catch {
    return { ok: false, reason: 'the link is not a valid URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, reason: 'the link must start with https://' };
  }
  // `URL` already leaves the query string and the fragment out of the path.
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  const marker = segments.indexOf('g');
  const candidate = marker >= 0 ? segments[marker + 1] : undefined;
  if (candidate === undefined) {
    return { ok: false, reason: 'the link has no /g/ segment followed by an assistant id' };
  }
  let id: string;
  try {
    id = decodeURIComponent(candidate);
  } catch {
    return { ok: false, reason: 'the assistant id in the link is not valid' };
  }
  if (!id.startsWith('g-')) {
    return { ok: false, reason: `the segment after /g/ ("${id}") does not start with g-` };
  }
  if (!ASSISTANT_ID.test(id)) {
    return {
      ok: false,
      reason: 'the assistant id may contain only letters, digits, - and _ after g-',
    };
  }
  return { ok: true, id };
}
