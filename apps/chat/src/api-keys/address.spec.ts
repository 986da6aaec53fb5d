import { InvalidAddressError, normalizeAddress, sameAddress } from './address.js';

describe('normalizeAddress', () => {
  it.each([
    ['https://relay.example.com', 'https://relay.example.com', false],
    ['https://relay.example.com/', 'https://relay.example.com', false],
    ['  https://Relay.Example.com:443//  ', 'https://relay.example.com', false],
    ['http://127.0.0.1:18080', 'http://127.0.0.1:18080', false],
    ['https://relay.example.com/v1', 'https://relay.example.com', false],
    ['https://relay.example.com/v1/', 'https://relay.example.com', false],
    ['https://relay.example.com/openai/v1', 'https://relay.example.com/openai', false],
    ['https://relay.example.com/v1/chat/completions', 'https://relay.example.com', true],
    ['https://relay.example.com/v1/chat/completions/', 'https://relay.example.com', true],
    ['https://relay.example.com/api/V1/Chat/Completions', 'https://relay.example.com/api', true],
    ['https://relay.example.com/v2', 'https://relay.example.com/v2', false],
  ])('%s → %s (normalized: %s)', (input, address, normalized) => {
    expect(normalizeAddress(input)).toEqual({ address, normalized });
  });

  it.each([
    ['relay.example.com', 'must be a URL'],
    ['ftp://relay.example.com', 'http:// or https://'],
    ['https://user:pass@relay.example.com', 'credentials'],
    ['https://relay.example.com?key=1', 'query string'],
    ['https://relay.example.com/#x', 'fragment'],
  ])('refuses %s', (input, reason) => {
    expect(() => normalizeAddress(input)).toThrow(InvalidAddressError);
    expect(() => normalizeAddress(input)).toThrow(reason);
  });

  it('compares addresses by their base URL', () => {
    expect(sameAddress('https://Relay.example.com/v1/', 'https://relay.example.com')).toBe(true);
    expect(sameAddress('https://relay.example.com', 'https://relay.example.com/other')).toBe(false);
    expect(sameAddress('not a url', 'not a url')).toBe(false);
  });
});
