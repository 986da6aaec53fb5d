export { hashPassword, verifyPassword } from './passwords.js';
export { SecretCipher, SecretCipherError, generateSecretKeySpec } from './secret-cipher.js';
export {
  generateA2aKey,
  generateGatewayToken,
  generateSessionToken,
  lastFour,
  sha256Hex,
} from './tokens.js';
export {
  verifyWebhookSignature,
  WEBHOOK_SIGNATURE_HEADER,
  webhookSignature,
} from './webhook-signature.js';
export { generateRedemptionCode, normaliseRedemptionCode } from './redemption-codes.js';
