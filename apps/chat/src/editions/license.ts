import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

// A license is `base64url(JSON payload) + "." + base64url(Ed25519 signature of the payload
// bytes)`. It is verified offline against the vendor's public key (docs/specification.md,
// "Editions and licenses"; GeekAI's check was an online call), and it is bound to one
// installation and one period.

export interface LicensePayload {
  licenseId: string;
  licensee: string;
  edition: 'plus';
  installationId: string;
  /** ISO 8601. */
  issuedAt: string;
  /** ISO 8601. */
  expiresAt: string;
}

/** A signed payload as read, before its edition is checked. */
type ClaimedPayload = Omit<LicensePayload, 'edition'> & { edition: string };

export type LicenseRefusal =
  'malformed' | 'forged' | 'wrong_edition' | 'expired' | 'not_yet_valid' | 'other_installation';

export type LicenseCheck =
  | { ok: true; payload: LicensePayload }
  | { ok: false; reason: LicenseRefusal; message: string; payload?: ClaimedPayload };

/** Issued-at dates slightly in the future are accepted: clocks differ between machines. */
const CLOCK_SKEW_MS = 5 * 60_000;

export class LicenseKeyError extends Error {
  override readonly name = 'LicenseKeyError';
}

/** Reads an Ed25519 public key given as PEM or as base64 of its SPKI (DER) bytes. */
export function parsePublicKey(text: string): KeyObject {
  const trimmed = text.trim().replace(/\\n/g, '\n');
  let key: KeyObject;
  try {
    key = trimmed.startsWith('-----BEGIN')
      ? createPublicKey(trimmed)
      : createPublicKey({ key: Buffer.from(trimmed, 'base64'), format: 'der', type: 'spki' });
  } catch {
    throw new LicenseKeyError(
      'LICENSE_PUBLIC_KEY must be an Ed25519 public key, as PEM or as base64 SPKI',
    );
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new LicenseKeyError(
      `LICENSE_PUBLIC_KEY must be an Ed25519 key, not ${key.asymmetricKeyType ?? 'unknown'}`,
    );
  }
  return key;
}

/** Reads an Ed25519 private key in PEM (PKCS#8), as `openssl genpkey -algorithm ed25519` writes it. */
export function parsePrivateKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new LicenseKeyError('the private key must be an Ed25519 key in PEM (PKCS#8)');
  }
  if (key.asymmetricKeyType !== 'ed25519') {
    throw new LicenseKeyError(
      `the private key must be Ed25519, not ${key.asymmetricKeyType ?? 'unknown'}`,
    );
  }
  return key;
}

export function signLicense(payload: LicensePayload, privateKey: KeyObject): string {
  const bytes = Buffer.from(JSON.stringify(payload), 'utf8');
  const signature = sign(null, bytes, privateKey);
  return `${bytes.toString('base64url')}.${signature.toString('base64url')}`;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

function isIsoDate(value: unknown): value is string {
  return (
    typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) && !isNaN(Date.parse(value))
  );
}

function shortText(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.trim() !== '' && value.length <= max;
}

function asPayload(value: unknown): ClaimedPayload | null {
  if (typeof value !== 'object' || value === null) return null;
  const candidate = value as Record<string, unknown>;
  if (
    !shortText(candidate.licenseId, 64) ||
    !shortText(candidate.licensee, 200) ||
    typeof candidate.edition !== 'string' ||
    !shortText(candidate.installationId, 64) ||
    !isIsoDate(candidate.issuedAt) ||
    !isIsoDate(candidate.expiresAt)
  ) {
    return null;
  }
  return candidate as unknown as ClaimedPayload;
}

/**
 * Checks a license: well formed, signed by `publicKey`, for the plus edition, for this
 * installation, and valid at `now`. The reason names what is wrong when it is not.
 */
export function verifyLicense(
  license: string,
  publicKey: KeyObject,
  installationId: string,
  now: Date = new Date(),
): LicenseCheck {
  const parts = license.trim().split('.');
  const [body, signature] = parts;
  if (
    parts.length !== 2 ||
    !body ||
    !signature ||
    !BASE64URL.test(body) ||
    !BASE64URL.test(signature)
  ) {
    return {
      ok: false,
      reason: 'malformed',
      message: 'the license is malformed: expected two base64url parts joined by "."',
    };
  }
  const bytes = Buffer.from(body, 'base64url');
  if (!verify(null, bytes, publicKey, Buffer.from(signature, 'base64url'))) {
    return {
      ok: false,
      reason: 'forged',
      message:
        'the license signature is not valid: it was not issued by the vendor, or it was altered',
    };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    parsed = null;
  }
  const payload = asPayload(parsed);
  if (!payload) {
    return { ok: false, reason: 'malformed', message: 'the license content is incomplete' };
  }
  if (payload.edition !== 'plus') {
    return {
      ok: false,
      reason: 'wrong_edition',
      message: `the license is for the "${payload.edition}" edition, not plus`,
      payload,
    };
  }
  if (payload.installationId !== installationId) {
    return {
      ok: false,
      reason: 'other_installation',
      message: `the license was issued for another installation (${payload.installationId}); this installation is ${installationId}`,
      payload,
    };
  }
  if (Date.parse(payload.issuedAt) > now.getTime() + CLOCK_SKEW_MS) {
    return {
      ok: false,
      reason: 'not_yet_valid',
      message: `the license is not valid before ${payload.issuedAt}`,
      payload,
    };
  }
  if (Date.parse(payload.expiresAt) <= now.getTime()) {
    return {
      ok: false,
      reason: 'expired',
      message: `the license expired on ${payload.expiresAt}`,
      payload,
    };
  }
  return { ok: true, payload: { ...payload, edition: payload.edition } };
}
