import { hash, randomBytes } from 'node:crypto';

// Bearer credentials handed to people and programs: gateway tokens (`sk-…`), login
// sessions (`sess-…`) and the chat app's A2A keys (`a2a-…`). Only their SHA-256 is ever stored; the prefixes let the logger
// recognise and mask them.

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function randomText(length: number): string {
  // 62 does not divide 256: reject the bytes that would bias the draw.
  const limit = 256 - (256 % ALPHABET.length);
  let text = '';
  while (text.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit && text.length < length) text += ALPHABET[byte % ALPHABET.length];
    }
  }
  return text;
}

export function generateGatewayToken(): string {
  return `sk-${randomText(48)}`;
}

export function generateSessionToken(): string {
  return `sess-${randomText(43)}`;
}

export function generateA2aKey(): string {
  return `a2a-${randomText(43)}`;
}

/** One call, no Hash object: every request's bearer token is hashed to be looked up. */
export function sha256Hex(value: string): string {
  return hash('sha256', value, 'hex');
}

/** The part of a secret that may be shown: its last four characters. */
export function lastFour(secret: string): string {
  return secret.slice(-4);
}
