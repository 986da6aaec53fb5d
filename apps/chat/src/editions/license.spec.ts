import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import {
  LicenseKeyError,
  parsePrivateKey,
  parsePublicKey,
  signLicense,
  verifyLicense,
  type LicensePayload,
} from './license.js';

const vendor = generateKeyPairSync('ed25519');
const installationId = randomUUID();
const day = 86_400_000;

function payload(overrides: Partial<LicensePayload> = {}): LicensePayload {
  return {
    licenseId: randomUUID(),
    licensee: 'Example Ltd',
    edition: 'plus',
    installationId,
    issuedAt: new Date(Date.now() - day).toISOString(),
    expiresAt: new Date(Date.now() + 30 * day).toISOString(),
    ...overrides,
  };
}

describe('licenses', () => {
  it('accepts a license signed by the vendor for this installation', () => {
    const issued = payload();
    const check = verifyLicense(
      signLicense(issued, vendor.privateKey),
      vendor.publicKey,
      installationId,
    );
    expect(check).toEqual({ ok: true, payload: issued });
  });

  it('refuses a license signed by another key', () => {
    const forger = generateKeyPairSync('ed25519');
    const check = verifyLicense(
      signLicense(payload(), forger.privateKey),
      vendor.publicKey,
      installationId,
    );
    expect(check).toMatchObject({ ok: false, reason: 'forged' });
  });

  it('refuses a license whose content was altered after signing', () => {
    const [, signature] = signLicense(payload(), vendor.privateKey).split('.');
    const altered = Buffer.from(
      JSON.stringify(payload({ expiresAt: new Date(Date.now() + 3650 * day).toISOString() })),
    ).toString('base64url');
    expect(
      verifyLicense(`${altered}.${signature}`, vendor.publicKey, installationId),
    ).toMatchObject({
      ok: false,
      reason: 'forged',
    });
  });

  it('refuses an expired license, naming when it expired', () => {
    const expiresAt = new Date(Date.now() - 1000).toISOString();
    const check = verifyLicense(
      signLicense(payload({ expiresAt }), vendor.privateKey),
      vendor.publicKey,
      installationId,
    );
    expect(check).toMatchObject({ ok: false, reason: 'expired' });
    expect(!check.ok && check.message).toContain(expiresAt);
  });

  it('refuses a license of another installation or edition, or not valid yet', () => {
    const sign = (p: Partial<LicensePayload>) => signLicense(payload(p), vendor.privateKey);
    expect(
      verifyLicense(sign({ installationId: randomUUID() }), vendor.publicKey, installationId),
    ).toMatchObject({ ok: false, reason: 'other_installation' });
    expect(
      verifyLicense(sign({ edition: 'enterprise' as 'plus' }), vendor.publicKey, installationId),
    ).toMatchObject({ ok: false, reason: 'wrong_edition' });
    expect(
      verifyLicense(
        sign({ issuedAt: new Date(Date.now() + day).toISOString() }),
        vendor.publicKey,
        installationId,
      ),
    ).toMatchObject({ ok: false, reason: 'not_yet_valid' });
  });

  it.each(['', 'abc', 'a.b.c', 'not base64!.x', `${Buffer.from('{}').toString('base64url')}.`])(
    'refuses the malformed license %j',
    (text) => {
      expect(verifyLicense(text, vendor.publicKey, installationId)).toMatchObject({
        ok: false,
        reason: 'malformed',
      });
    },
  );

  it('refuses a correctly signed license with missing fields', () => {
    const bytes = Buffer.from(JSON.stringify({ licenseId: 'x', edition: 'plus' }));
    const signature = sign(null, bytes, vendor.privateKey);
    const license = `${bytes.toString('base64url')}.${signature.toString('base64url')}`;
    expect(verifyLicense(license, vendor.publicKey, installationId)).toMatchObject({
      ok: false,
      reason: 'malformed',
    });
  });

  it('reads public keys as PEM or base64 SPKI, and only Ed25519', () => {
    const pem = vendor.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const der = vendor.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    expect(parsePublicKey(pem).asymmetricKeyType).toBe('ed25519');
    expect(parsePublicKey(pem.replace(/\n/g, '\\n')).asymmetricKeyType).toBe('ed25519');
    expect(parsePublicKey(der).asymmetricKeyType).toBe('ed25519');
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    expect(() =>
      parsePublicKey(rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString()),
    ).toThrow(LicenseKeyError);
    expect(() => parsePublicKey('garbage')).toThrow('Ed25519');
    const privatePem = vendor.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(parsePrivateKey(privatePem).asymmetricKeyType).toBe('ed25519');
    expect(() => parsePrivateKey(pem)).toThrow(LicenseKeyError);
  });
});
