// The address of an API key record is the provider's base URL. Before v4.1.1 records held
// the full endpoint, `{base}/v1/chat/completions` (docs/specification.md, "Chat upstream
// records"); such an address is still accepted and cut to its base, and the record
// remembers that it was.

export interface NormalizedAddress {
  /** The base URL: scheme, host, optional port and path, no trailing slash. */
  address: string;
  /** True when a pre-v4.1.1 full endpoint address was given. */
  normalized: boolean;
}

export class InvalidAddressError extends Error {
  override readonly name = 'InvalidAddressError';
}

const FULL_ENDPOINT = '/v1/chat/completions';
const VERSION_SEGMENT = '/v1';

function stripTrailingSlashes(path: string): string {
  return path.replace(/\/+$/, '');
}

function endsWithSegments(path: string, tail: string): boolean {
  return path.toLowerCase().endsWith(tail);
}

export function normalizeAddress(input: string): NormalizedAddress {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new InvalidAddressError('the address must be a URL such as https://relay.example.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidAddressError('the address must start with http:// or https://');
  }
  if (url.username !== '' || url.password !== '') {
    throw new InvalidAddressError(
      'the address must not contain credentials; put the key in the key field',
    );
  }
  if (url.search !== '' || url.hash !== '') {
    throw new InvalidAddressError('the address must not have a query string or a fragment');
  }
  let path = stripTrailingSlashes(url.pathname);
  let normalized = false;
  if (endsWithSegments(path, FULL_ENDPOINT)) {
    path = stripTrailingSlashes(path.slice(0, -FULL_ENDPOINT.length));
    normalized = true;
  } else if (endsWithSegments(path, VERSION_SEGMENT)) {
    path = stripTrailingSlashes(path.slice(0, -VERSION_SEGMENT.length));
  }
  // `origin` lowercases the host and drops a default port.
  return { address: url.origin + path, normalized };
}

/** Whether two addresses name the same base URL, however each was written. */
export function sameAddress(a: string, b: string): boolean {
  try {
    return normalizeAddress(a).address === normalizeAddress(b).address;
  } catch {
    return false;
  }
}
