export { hashPassword, verifyPassword } from './passwords.js';
export { SecretCipher, SecretCipherError, generateSecretKeySpec } from './secret-cipher.js';
export { generateGatewayToken, generateSessionToken, lastFour, sha256Hex } from './tokens.js';
