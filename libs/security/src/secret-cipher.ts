import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

// Upstream secrets at rest: AES-256-GCM with a random 96-bit IV per value. The envelope
// names the key that sealed it, so keys can be rotated: the first configured key seals,
// every configured key opens, and `reseal` moves a value to the current key.

const VERSION = 'v1';
const ALGORITHM = 'aes-256-gcm';

export class SecretCipherError extends Error {
  override readonly name = 'SecretCipherError';
}

interface SecretKey {
  id: string;
  key: Buffer;
}

export class SecretCipher {
  private readonly keys: Map<string, Buffer>;
  private readonly current: SecretKey;

  /** @param keySpecs `id:base64(32 bytes)` entries; the first one seals new values. */
  constructor(keySpecs: readonly string[]) {
    const parsed = keySpecs.map(parseKeySpec);
    const first = parsed[0];
    if (!first) throw new SecretCipherError('at least one secret key is required');
    this.current = first;
    this.keys = new Map(parsed.map((k) => [k.id, k.key]));
  }

  get currentKeyId(): string {
    return this.current.id;
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv(ALGORITHM, this.current.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [
      VERSION,
      this.current.id,
      iv.toString('base64url'),
      tag.toString('base64url'),
      body.toString('base64url'),
    ].join('.');
  }

  open(envelope: string): string {
    const [version, keyId, iv, tag, body] = envelope.split('.');
    if (version !== VERSION || !keyId || !iv || !tag || body === undefined) {
      throw new SecretCipherError('not a sealed secret');
    }
    const key = this.keys.get(keyId);
    if (!key) throw new SecretCipherError(`sealed with key "${keyId}", which is not configured`);
    try {
      const decipher = createDecipheriv(ALGORITHM, key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([
        decipher.update(Buffer.from(body, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretCipherError(`sealed secret does not open with key "${keyId}"`);
    }
  }

  /** The envelope sealed with the current key, or null when it already is. */
  reseal(envelope: string): string | null {
    return envelope.split('.')[1] === this.current.id ? null : this.seal(this.open(envelope));
  }
}

function parseKeySpec(spec: string): SecretKey {
  const separator = spec.indexOf(':');
  const id = spec.slice(0, separator);
  const key = Buffer.from(spec.slice(separator + 1), 'base64');
  if (separator < 1 || key.length !== 32) {
    throw new SecretCipherError('a secret key must be "id:" followed by 32 bytes in base64');
  }
  return { id, key };
}

/** A new key spec, for `SECRET_KEYS`. */
export function generateSecretKeySpec(id: string): string {
  return `${id}:${randomBytes(32).toString('base64')}`;
}
