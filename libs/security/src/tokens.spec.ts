import {
  generateA2aKey,
  generateGatewayToken,
  generateSessionToken,
  lastFour,
  sha256Hex,
} from './tokens.js';

describe('tokens', () => {
  it('makes unguessable, recognisable tokens', () => {
    const tokens = new Set(Array.from({ length: 1000 }, generateGatewayToken));
    expect(tokens.size).toBe(1000);
    for (const token of tokens) expect(token).toMatch(/^sk-[A-Za-z0-9]{48}$/);
    expect(generateSessionToken()).toMatch(/^sess-[A-Za-z0-9]{43}$/);
    expect(generateA2aKey()).toMatch(/^a2a-[A-Za-z0-9]{43}$/);
  });

  it('hashes with SHA-256 and shows only the last four characters', () => {
    expect(sha256Hex('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(lastFour('sk-abcdefgh1234')).toBe('1234');
  });
});
