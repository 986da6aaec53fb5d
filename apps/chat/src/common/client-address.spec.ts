import { ClientAddressResolver } from './client-address.js';

describe('ClientAddressResolver', () => {
  const resolver = new ClientAddressResolver(['127.0.0.1/32', '::1/128', '10.0.0.0/8']);

  it('uses the peer when it is not a trusted proxy, whatever it forwards', () => {
    expect(resolver.resolve('203.0.113.9', '198.51.100.1')).toBe('203.0.113.9');
  });

  it('takes the right-most untrusted hop behind trusted proxies', () => {
    expect(resolver.resolve('127.0.0.1', '198.51.100.1')).toBe('198.51.100.1');
    expect(resolver.resolve('::ffff:127.0.0.1', '6.6.6.6, 198.51.100.1, 10.1.2.3')).toBe(
      '198.51.100.1',
    );
    expect(resolver.resolve('::1', ['2001:db8::1', '10.0.0.1'])).toBe('2001:db8::1');
  });

  it('falls back to the peer without a usable header', () => {
    expect(resolver.resolve('127.0.0.1', undefined)).toBe('127.0.0.1');
    expect(resolver.resolve('127.0.0.1', 'not-an-ip')).toBe('127.0.0.1');
    expect(resolver.resolve(undefined, undefined)).toBe('unknown');
  });

  it('refuses a bad proxy entry', () => {
    expect(() => new ClientAddressResolver(['nonsense'])).toThrow('not an IP address');
  });
});
