import { BlockList, isIP } from 'node:net';

// The chat API sits behind the web app's pass-through. The address that counts for login
// throttling is the browser's: the right-most X-Forwarded-For entry that is not one of
// our own proxies, believed only when the connection itself comes from a trusted proxy.

function family(address: string): 'ipv4' | 'ipv6' | null {
  const kind = isIP(address);
  return kind === 4 ? 'ipv4' : kind === 6 ? 'ipv6' : null;
}

/** `::ffff:127.0.0.1` is how an IPv4 peer appears on a dual-stack socket. */
function plain(address: string): string {
  const trimmed = address.trim();
  return trimmed.toLowerCase().startsWith('::ffff:') && isIP(trimmed.slice(7)) === 4
    ? trimmed.slice(7)
    : trimmed;
}

export class ClientAddressResolver {
  private readonly trusted = new BlockList();

  /** @param proxies IP addresses or CIDRs, as in `TRUSTED_PROXIES`. */
  constructor(proxies: readonly string[]) {
    for (const entry of proxies) {
      const [address = '', bits] = entry.split('/');
      const kind = family(address);
      if (!kind) throw new Error(`not an IP address or CIDR: ${entry}`);
      if (bits === undefined) this.trusted.addAddress(address, kind);
      else this.trusted.addSubnet(address, Number(bits), kind);
    }
  }

  private isTrusted(address: string): boolean {
    const kind = family(address);
    return kind !== null && this.trusted.check(address, kind);
  }

  resolve(peer: string | undefined, forwardedFor: string | string[] | undefined): string {
    const direct = plain(peer ?? '');
    if (!this.isTrusted(direct) || forwardedFor === undefined) return direct || 'unknown';
    const chain = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
      .split(',')
      .map(plain)
      .filter((entry) => entry !== '');
    for (let index = chain.length - 1; index >= 0; index -= 1) {
      const hop = chain[index]!;
      if (!family(hop)) return direct;
      if (!this.isTrusted(hop)) return hop;
    }
    return chain[0] ?? direct;
  }
}
