/**
 * Where an OpenAI route of a channel lives: `https://relay.example/openai` (with or
 * without a trailing `/v1`) and `/chat/completions` give the origin and
 * `/openai/v1/chat/completions`.
 */
export function upstreamTarget(baseUrl: string, path: string): { origin: string; path: string } {
  const url = new URL(baseUrl);
  const base = url.pathname.replace(/\/+$/, '');
  const versioned = base.endsWith('/v1') ? base : `${base}/v1`;
  return { origin: url.origin, path: `${versioned}${path}` };
}
