import { ClientAddressResolver } from './client-address.js';

describe('ClientAddressResolver', () => {
  const resolver = new ClientAddressResolver(['127.0.0.1/32', '::1/128', '10.0.0.0/8']);

  it('takes the peer when no proxy is in between', () => {
    expect(resolver.resolve('203.0.113.9', undefined)).toBe('203.0.113.9');
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', () => {
    expect(resolver.resolve('203.0.113.9', '198.51.100.1')).toBe('203.0.113.9');
  });

  it('believes X-Forwarded-For from a trusted proxy', () => {
    expect(resolver.resolve('127.0.0.1', '198.51.100.1')).toBe('198.51.100.1');
    expect(resolver.resolve('::1', '2001:db8::7')).toBe('2001:db8::7');
  });

  it('reads the chain from the right, so a client cannot forge what the proxy appended', () => {
    // The client sent "X-Forwarded-For: 1.2.3.4"; nginx then the edge appended the real hops.
    expect(resolver.resolve('127.0.0.1', '1.2.3.4, 198.51.100.1, 10.0.0.5')).toBe('198.51.100.1');
    expect(resolver.resolve('127.0.0.1', ['1.2.3.4', '198.51.100.1'])).toBe('198.51.100.1');
  });

  it('stops at a hop that is not an address', () => {
    expect(resolver.resolve('127.0.0.1', 'evil, 10.0.0.5')).toBe('10.0.0.5');
    expect(resolver.resolve('127.0.0.1', '198.51.100.1, junk')).toBe('127.0.0.1');
  });

  it('unwraps IPv4-mapped IPv6 peers', () => {
    expect(resolver.resolve('::ffff:127.0.0.1', '198.51.100.1')).toBe('198.51.100.1');
    expect(resolver.resolve('::ffff:203.0.113.9', '198.51.100.1')).toBe('203.0.113.9');
  });

  it('refuses a malformed trusted proxy at start', () => {
    expect(() => new ClientAddressResolver(['not-an-ip'])).toThrow(/TRUSTED_PROXIES/);
  });
});
