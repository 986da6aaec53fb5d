import { generateSecretKeySpec, SecretCipher, SecretCipherError } from './secret-cipher.js';

describe('SecretCipher', () => {
  const oldKey = generateSecretKeySpec('old');
  const newKey = generateSecretKeySpec('new');

  it('seals with a fresh IV each time and opens what it sealed', () => {
    const cipher = new SecretCipher([oldKey]);
    const a = cipher.seal('sk-upstream-secret');
    const b = cipher.seal('sk-upstream-secret');
    expect(a).not.toBe(b);
    expect(a).not.toContain('sk-upstream-secret');
    expect(cipher.open(a)).toBe('sk-upstream-secret');
  });

  it('rotates: the first key seals, every key opens, reseal moves values to the current key', () => {
    const sealedOld = new SecretCipher([oldKey]).seal('value');
    const rotated = new SecretCipher([newKey, oldKey]);
    expect(rotated.open(sealedOld)).toBe('value');
    const resealed = rotated.reseal(sealedOld)!;
    expect(resealed.split('.')[1]).toBe('new');
    expect(new SecretCipher([newKey]).open(resealed)).toBe('value');
    expect(rotated.reseal(resealed)).toBeNull();
  });

  it('refuses tampered values, unknown keys and malformed envelopes', () => {
    const cipher = new SecretCipher([oldKey]);
    const sealed = cipher.seal('value');
    const parts = sealed.split('.');
    parts[4] = Buffer.from('tampered').toString('base64url');
    expect(() => cipher.open(parts.join('.'))).toThrow(SecretCipherError);
    expect(() => new SecretCipher([newKey]).open(sealed)).toThrow(
      /key "old", which is not configured/,
    );
    expect(() => cipher.open('plain text')).toThrow(/not a sealed secret/);
    expect(() => new SecretCipher(['short:AAAA'])).toThrow(/32 bytes/);
    expect(() => new SecretCipher([])).toThrow(/at least one/);
  });
});
