// The one redaction of the suite (docs/architecture.md, "Secrets in error text"). Upstreams
// and MCP servers quote credentials back in their errors, and that text flows on into client
// answers, log lines, audit rows and stored statuses; every one of those goes through
// `redactSecrets` here. Two layers: the secrets the caller (or this process) knows are
// removed wherever they appear, whatever their shape; then anything credential-shaped is
// masked, for the secrets nobody told us about (another account's key, a provider's
// session token).

export const REDACTED = '[redacted]';

/** Secrets shorter than this are not searched for: they would mask ordinary words. */
const MIN_SECRET_LENGTH = 8;

type Replacer = (match: string, ...groups: string[]) => string;

const CREDENTIAL_PATTERNS: [RegExp, Replacer][] = [
  // Bearer credentials in headers or messages, and Basic ones (base64, so not a word).
  [/\b(Bearer\s+)[^\s"',;]+/gi, (_m, scheme) => `${scheme}${REDACTED}`],
  [
    /\b(Basic\s+)([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])/g,
    (match, scheme, value) => (/[0-9+/=]/.test(value) ? `${scheme}${REDACTED}` : match),
  ],
  // A credential named as a header, a JSON field or a query parameter: `x-api-key: …`,
  // `"api_key":"…"`, Gemini's `?key=…`; also JSON quoted inside a JSON string
  // (`\"api_key\": \"…\"`, as a prompt in a logged request body holds it), whose
  // escaping backslash is left in place.
  [
    /\b((?:x-)?(?:api[-_]?key|goog-api-key|auth[-_]?token|access[-_]?token|secret[-_]?access[-_]?key|session[-_]?token|password)\\?"?\s*[:=]\s*\\?"?)[^\s"'\\,;&]+/gi,
    (_m, name) => `${name}${REDACTED}`,
  ],
  [/([?&]key=)[^\s"',;&]+/g, (_m, name) => `${name}${REDACTED}`],
  // OpenAI-style keys (ours and most providers', Anthropic's sk-ant-…): sk-…, our session
  // tokens and A2A keys.
  [/\b(sk|sess|a2a|pk|rk)-[A-Za-z0-9_-]{6,}/g, (_m, prefix) => `${prefix}-${REDACTED}`],
  // AWS access key ids (long-term AKIA, temporary ASIA), Google API keys, GitHub and
  // Slack tokens: the prefix says what it was, the rest goes.
  [/\b(AKIA|ASIA)[A-Z0-9]{12,}\b/g, (_m, prefix) => `${prefix}${REDACTED}`],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, () => `AIza${REDACTED}`],
  [/\b(gh[pousr]_)[A-Za-z0-9]{20,}/g, (_m, prefix) => `${prefix}${REDACTED}`],
  [/\b(xox[abprs]-)[A-Za-z0-9-]{10,}/g, (_m, prefix) => `${prefix}${REDACTED}`],
  // Long hex or base64 runs with letters and digits mixed: AWS secret keys, session
  // tokens, raw random keys. Words, paths and model names never look like this.
  [
    /(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{40,}={0,2}(?![A-Za-z0-9+/=_-])/g,
    (match) => (looksRandom(match) ? REDACTED : match),
  ],
];

/** Mixed letters and digits, as random keys are; hex needs no upper case. */
function looksRandom(run: string): boolean {
  const digits = /[0-9]/.test(run);
  if (/^[0-9a-fA-F]+$/.test(run)) return digits && /[a-fA-F]/.test(run);
  return digits && /[a-z]/.test(run) && /[A-Z]/.test(run);
}

/** Masks whatever looks like a credential, without knowing any secret. */
export function maskCredentials(text: string): string {
  let masked = text;
  for (const [pattern, replace] of CREDENTIAL_PATTERNS) {
    masked = masked.replace(pattern, replace as (match: string, ...rest: unknown[]) => string);
  }
  return masked;
}

/**
 * The forms one configured secret can appear in: as given, its parts (a Bedrock key is
 * `ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]`, and an upstream names only one part),
 * JSON-escaped and URL-encoded.
 */
function formsOf(secret: string): string[] {
  const whole = secret.trim();
  // Split on white space too: a configured header value `Bearer abc` is quoted as `abc`.
  const parts = [whole, ...whole.split(/[:\s]+/)];
  const forms = new Set<string>();
  for (const part of parts) {
    if (part.length < MIN_SECRET_LENGTH) continue;
    forms.add(part);
    forms.add(JSON.stringify(part).slice(1, -1));
    forms.add(encodeURIComponent(part));
  }
  // The longest first: a part must not break up a longer form before it is found.
  return [...forms].sort((a, b) => b.length - a.length);
}

/**
 * Forms of secrets that are searched for one by one (a `String#includes` each, longest
 * first) while there are at most this many; beyond, the text is scanned once instead. A
 * search costs about a nanosecond a character and a form, the scan about fifteen a
 * character whatever the number of forms: an edge in front of relays opens thousands of
 * upstream keys, and every log line is redacted.
 */
const SEARCHED_ONE_BY_ONE = 32;
const HASH_BASE = 31;

/** The rolling hash of `text`'s MIN_SECRET_LENGTH characters from `at`. */
function startHash(text: string, at: number): number {
  let hash = 0;
  for (let i = 0; i < MIN_SECRET_LENGTH; i += 1)
    hash = (Math.imul(hash, HASH_BASE) + text.charCodeAt(at + i)) | 0;
  return hash;
}

/** HASH_BASE to the power MIN_SECRET_LENGTH - 1: the weight of a window's first character. */
const LEADING_WEIGHT = Array.from({ length: MIN_SECRET_LENGTH - 1 }).reduce<number>(
  (weight) => Math.imul(weight, HASH_BASE),
  1,
);

/**
 * Secrets this process has opened (upstream keys, MCP and A2A headers). Every redaction,
 * the log lines' included, removes them too, so a key reaches no output even where the
 * code writing it did not know which key was in play. Registering one costs the same
 * however many are known.
 */
export class KnownSecrets {
  private readonly forms = new Set<string>();
  /** Every form, longest first, for the search one by one; made again when needed. */
  private longestFirst: string[] | null = null;
  /** Forms by the hash of their first MIN_SECRET_LENGTH characters, each list longest first. */
  private readonly byStart = new Map<number, string[]>();

  add(form: string): void {
    if (this.forms.has(form)) return;
    this.forms.add(form);
    this.longestFirst = null;
    const hash = startHash(form, 0);
    const sharing = this.byStart.get(hash);
    if (!sharing) this.byStart.set(hash, [form]);
    else {
      const shorter = sharing.findIndex((other) => other.length < form.length);
      sharing.splice(shorter === -1 ? sharing.length : shorter, 0, form);
    }
  }

  removeFrom(text: string): string {
    if (this.forms.size === 0) return text;
    if (this.forms.size <= SEARCHED_ONE_BY_ONE) {
      this.longestFirst ??= [...this.forms].sort((a, b) => b.length - a.length);
      return removeAll(text, this.longestFirst);
    }
    return this.scan(text);
  }

  /**
   * One pass over `text`: at each position, the forms whose first characters hash alike,
   * longest first; the first that is there is removed and the pass goes on after it.
   */
  private scan(text: string): string {
    let out = '';
    let copiedTo = 0;
    let at = 0;
    let hash = text.length >= MIN_SECRET_LENGTH ? startHash(text, 0) : 0;
    while (at + MIN_SECRET_LENGTH <= text.length) {
      const found = this.byStart.get(hash)?.find((form) => text.startsWith(form, at));
      if (found) {
        out += text.slice(copiedTo, at) + REDACTED;
        at += found.length;
        copiedTo = at;
        if (at + MIN_SECRET_LENGTH <= text.length) hash = startHash(text, at);
        continue;
      }
      if (at + MIN_SECRET_LENGTH < text.length) {
        const leaving = Math.imul(text.charCodeAt(at), LEADING_WEIGHT);
        hash = (Math.imul(hash - leaving, HASH_BASE) + text.charCodeAt(at + MIN_SECRET_LENGTH)) | 0;
      }
      at += 1;
    }
    return copiedTo === 0 ? text : out + text.slice(copiedTo);
  }
}

const known = new KnownSecrets();

export function registerSecret(secret: string | null | undefined): void {
  if (!secret) return;
  for (const form of formsOf(secret)) known.add(form);
}

function removeAll(text: string, forms: readonly string[]): string {
  let out = text;
  for (const form of forms) {
    if (out.includes(form)) out = out.split(form).join(REDACTED);
  }
  return out;
}

/**
 * Text that may quote a credential, made safe to show, log or store: each given secret
 * and each registered one removed, then credential shapes masked. Cut text to its length
 * limit after this, never before: a cut can leave a secret's prefix the search no longer
 * recognises.
 */
export function redactSecrets(
  text: string,
  secrets: Iterable<string | null | undefined> = [],
): string {
  return maskCredentials(removeSecrets(text, secrets));
}

/**
 * Only the known secrets removed, no shapes masked: for content (a tool's result) where a
 * long random-looking string is data, yet a configured credential still must not show.
 */
export function removeSecrets(
  text: string,
  secrets: Iterable<string | null | undefined> = [],
): string {
  const given: string[] = [];
  for (const secret of secrets) if (secret) given.push(...formsOf(secret));
  const out =
    given.length > 0
      ? removeAll(
          text,
          given.sort((a, b) => b.length - a.length),
        )
      : text;
  return known.removeFrom(out);
}

/** `redactSecrets`, then cut to `maxChars`. */
export function redactAndCut(
  text: string,
  maxChars: number,
  secrets: Iterable<string | null | undefined> = [],
): string {
  return redactSecrets(text, secrets).slice(0, maxChars);
}

/** Field names whose values are censored at the top level of a log object. */
export const SECRET_FIELDS = [
  'authorization',
  'password',
  'currentPassword',
  'newPassword',
  'passwordHash',
  'secret',
  'apiKey',
  'api_key',
  'key',
  'keys',
  'token',
  'cookie',
  'license',
];

/** The most sensitive names are also censored one level down (headers, DTOs, errors). */
const NESTED_SECRET_FIELDS = ['authorization', 'password', 'secret'];

/**
 * Redaction paths for pino. Wildcards are costly on every line (each `*` path adds about a
 * microsecond), so only two levels are covered by name; anything credential-shaped deeper
 * down, and every registered secret, is still removed by `redactSecrets` on the serialized
 * line.
 */
export function redactPaths(): string[] {
  return [...SECRET_FIELDS, ...NESTED_SECRET_FIELDS.map((field) => `*.${field}`)];
}
