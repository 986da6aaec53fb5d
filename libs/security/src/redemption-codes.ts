import { randomInt } from 'node:crypto';

// Redemption codes handed to people (chat credit codes, docs/credits.md; team balance codes,
// docs/teams.md): typed by hand, so short, grouped and unambiguous. Only the SHA-256 of the
// normalised code is stored.

/** Crockford's base 32 without I, L, O, U: nothing to misread. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** 12 characters of 32: 60 bits, far beyond guessing within a redemption rate limit. */
const CODE_GROUPS = 3;
const GROUP_LENGTH = 4;

/** A new code, `SY-XXXX-XXXX-XXXX`. */
export function generateRedemptionCode(): string {
  const groups: string[] = [];
  for (let g = 0; g < CODE_GROUPS; g += 1) {
    let group = '';
    for (let i = 0; i < GROUP_LENGTH; i += 1) group += ALPHABET[randomInt(ALPHABET.length)];
    groups.push(group);
  }
  return `SY-${groups.join('-')}`;
}

/** The code as typed, reduced to what was generated: case, spaces and dashes do not matter. */
export function normaliseRedemptionCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '').replace(/^SY/, '');
}
