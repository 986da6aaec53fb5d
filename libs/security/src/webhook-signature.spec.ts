import { createHmac } from 'node:crypto';
import { verifyWebhookSignature, webhookSignature } from './webhook-signature.js';

describe('webhook signatures', () => {
  const secret = 'a-shared-secret-of-some-length';
  const body = '{"event":"budget.soft_threshold","spent":"800"}';

  it('is the hex HMAC-SHA256 of the raw body, as any receiver computes it', () => {
    const hex = createHmac('sha256', secret).update(body).digest('hex');
    expect(webhookSignature(secret, body)).toBe(`sha256=${hex}`);
    expect(verifyWebhookSignature(secret, body, `sha256=${hex}`)).toBe(true);
  });

  it('fails for another body, another secret, or no header', () => {
    const header = webhookSignature(secret, body);
    expect(verifyWebhookSignature(secret, `${body} `, header)).toBe(false);
    expect(verifyWebhookSignature('another-secret-entirely', body, header)).toBe(false);
    expect(verifyWebhookSignature(secret, body, undefined)).toBe(false);
    expect(verifyWebhookSignature(secret, body, 'sha256=00')).toBe(false);
  });
});
