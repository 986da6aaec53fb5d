// Secrets must never reach a log line. Named fields are censored by the logger's redact
// paths; values that look like credentials are masked wherever they appear in the line.

const CREDENTIAL_PATTERNS: RegExp[] = [
  // Bearer credentials in headers or messages.
  /(Bearer\s+)[^\s"',;]+/gi,
  // OpenAI-style keys (ours and most providers'): sk-..., our session tokens and A2A keys.
  /\b(sk|sess|a2a)-[A-Za-z0-9_-]{6,}/g,
];

export function maskCredentials(text: string): string {
  let masked = text;
  for (const pattern of CREDENTIAL_PATTERNS) {
    masked = masked.replace(pattern, (match: string, prefix: string) =>
      prefix && /^bearer/i.test(prefix) ? `${prefix}[redacted]` : `${prefix}-[redacted]`,
    );
  }
  return masked;
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
 * down is still masked by `maskCredentials` on the serialized line.
 */
export function redactPaths(): string[] {
  return [...SECRET_FIELDS, ...NESTED_SECRET_FIELDS.map((field) => `*.${field}`)];
}
