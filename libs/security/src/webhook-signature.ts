import { createHmac, timingSafeEqual } from 'node:crypto';

// Webhooks the gateway sends (soft budget alerts, docs/budgets.md "Alerts") are signed so
// a receiver can tell them from anyone else's POST: the header
// `x-switchyard-signature: sha256=<hex>` carries the HMAC-SHA256 of the raw body, keyed
// with the secret the operator shares with the receiver.

export const WEBHOOK_SIGNATURE_HEADER = 'x-switchyard-signature';

/** The signature header's value for a body: `sha256=` and the hex HMAC-SHA256. */
export function webhookSignature(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** True when `header` signs `body` with `secret` (compared in constant time). */
export function verifyWebhookSignature(
  secret: string,
  body: string | Buffer,
  header: string | undefined,
): boolean {
  if (header === undefined) return false;
  const expected = Buffer.from(webhookSignature(secret, body));
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
