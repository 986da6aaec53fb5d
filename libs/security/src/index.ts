export { hashPassword, verifyPassword } from './passwords.js';
export { SecretCipher, SecretCipherError, generateSecretKeySpec } from './secret-cipher.js';
export {
  generateA2aKey,
  generateGatewayToken,
  generateSessionToken,
  lastFour,
  sha256Hex,
} from './tokens.js';
