import { BlockList, isIP } from 'node:net';

/**
 * The client's address. `X-Forwarded-For` is believed only when the direct peer is a
 * trusted proxy (the edge); then the chain is read from the right, skipping trusted
 * hops, and the first untrusted address is the client. A client cannot forge its way
 * past the proxy: whatever it puts on the left of the header is never reached.
 */
export class ClientAddressResolver {
  private readonly trusted = new BlockList();

  /** @param trustedProxies IP addresses or CIDR blocks. */
  constructor(trustedProxies: readonly string[]) {
    for (const entry of trustedProxies) {
      const [address = '', prefix] = entry.split('/');
      const family = isIP(address);
      if (family === 0) throw new Error(`TRUSTED_PROXIES: "${entry}" is not an IP address or CIDR`);
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (prefix === undefined) this.trusted.addAddress(address, type);
      else this.trusted.addSubnet(address, Number(prefix), type);
    }
  }

  resolve(peer: string | undefined, forwardedFor: string | string[] | undefined): string {
    const direct = normalize(peer ?? '') ?? 'unknown';
    if (!this.isTrusted(direct) || forwardedFor === undefined) return direct;
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',');
    let client = direct;
    for (let index = hops.length - 1; index >= 0; index -= 1) {
      const hop = normalize(hops[index] ?? '');
      if (hop === null) break;
      client = hop;
      if (!this.isTrusted(hop)) break;
    }
    return client;
  }

  isTrusted(address: string): boolean {
    const family = isIP(address);
    if (family === 0) return false;
    return this.trusted.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/** A bare IP address (IPv4-mapped IPv6 unwrapped), or null when the text is none. */
function normalize(text: string): string | null {
  let address = text.trim();
  if (address.startsWith('[') && address.includes(']')) {
    address = address.slice(1, address.indexOf(']'));
  }
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped?.[1]) address = mapped[1];
  return isIP(address) === 0 ? null : address;
}
