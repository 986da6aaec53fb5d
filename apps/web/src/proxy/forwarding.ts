import { isHostAndPort, isWebProtocol } from '@switchyard/service';
import { type IncomingHttpHeaders } from 'node:http';

// Which headers cross the pass-through, and what it adds. Hop-by-hop headers (RFC 9110
// §7.6.1) belong to one connection and never travel further.

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

export type HeaderRecord = Record<string, string | string[]>;

/** Header names listed in `Connection` are hop-by-hop for this message too. */
function connectionTokens(value: string | string[] | undefined): Set<string> {
  const joined = Array.isArray(value) ? value.join(',') : (value ?? '');
  return new Set(
    joined
      .split(',')
      .map((token) => token.trim().toLowerCase())
      .filter((token) => token !== ''),
  );
}

function endToEnd(
  headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
  drop: readonly string[],
): HeaderRecord {
  const listed = connectionTokens(headers.connection);
  const kept: HeaderRecord = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower) || listed.has(lower)) continue;
    if (drop.includes(lower)) continue;
    kept[lower] = value;
  }
  return kept;
}

export interface ClientFacts {
  /** The address of the peer that connected to us. */
  clientIp: string;
  requestId: string;
  /** `http` or `https`, as the client reached us (or a trusted proxy in front says). */
  protocol: string;
  /** The host[:port] the client asked for (or a trusted proxy in front says). */
  host: string | undefined;
}

/**
 * The headers sent to the chat backend: the client's end-to-end headers, minus `host` (the
 * backend's own is set from its URL), plus the forwarding facts. The client's address is
 * appended to any `X-Forwarded-For` chain already present, as nginx's
 * `$proxy_add_x_forwarded_for` does (docs/specification.md, "Reverse proxy"): the last
 * entry is the one we vouch for.
 */
export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  facts: ClientFacts,
): HeaderRecord {
  // `expect: 100-continue` was answered by this server already; the client refuses to
  // send it on (and the backend has no use for it).
  // The client's own X-Forwarded-Host/-Proto never go on: this proxy states them, from what
  // the client reached (or a trusted proxy in front of it said), and the chat app builds
  // its agent card's URL from them.
  const headers = endToEnd(incoming, [
    'host',
    'x-forwarded-for',
    'x-forwarded-host',
    'x-forwarded-proto',
    'x-request-id',
    'expect',
  ]);
  const chain = incoming['x-forwarded-for'];
  const previous = (Array.isArray(chain) ? chain.join(', ') : (chain ?? '')).trim();
  headers['x-forwarded-for'] = previous === '' ? facts.clientIp : `${previous}, ${facts.clientIp}`;
  headers['x-request-id'] = facts.requestId;
  if (facts.host !== undefined && isHostAndPort(facts.host)) {
    headers['x-forwarded-host'] = facts.host;
  }
  if (isWebProtocol(facts.protocol)) headers['x-forwarded-proto'] = facts.protocol;
  return headers;
}

/** The headers returned to the client: the backend's end-to-end headers, unchanged. */
export function clientResponseHeaders(
  upstream: Record<string, string | string[] | undefined>,
): HeaderRecord {
  return endToEnd(upstream, []);
}
