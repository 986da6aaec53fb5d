import { generateGatewayToken, lastFour, SecretCipher, sha256Hex } from '@switchyard/security';
import { query } from '@switchyard/testing';

// What the gateway benchmarks route through, written straight into their database: channels
// on the mock upstream, each holding its upstream keys, and the tokens the load is sent with.

export interface ChannelSeed {
  name: string;
  provider: 'openai' | 'anthropic' | 'gemini';
  baseUrl: string;
  models: string[];
  /**
   * The keys (accounts) the channel calls the upstream with, sealed as the apps' SECRET_KEYS
   * read them: one for a single account, many for a relay's pool.
   */
  keys: string[];
  /** None: the request's path takes no Redis round trip for the channel. */
  limits?: { rpm: number; tpm: number; concurrency: number };
}

export async function seedChannel(
  databaseUrl: string,
  cipher: SecretCipher,
  channel: ChannelSeed,
): Promise<void> {
  const [row] = await query<{ id: number }>(
    databaseUrl,
    `INSERT INTO "Channel" (name, kind, "baseUrl", models, provider, "rpmLimit", "tpmLimit", "concurrencyLimit", "updatedAt")
     VALUES ($1, 'single', $2, $3, $4::"ChannelProvider", $5, $6, $7, now()) RETURNING id`,
    [
      channel.name,
      channel.baseUrl,
      channel.models,
      channel.provider,
      channel.limits?.rpm ?? null,
      channel.limits?.tpm ?? null,
      channel.limits?.concurrency ?? null,
    ],
  );
  await query(
    databaseUrl,
    `INSERT INTO "ChannelKey" ("channelId", "secretCiphertext", fingerprint, "lastFour")
     SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[])`,
    [
      row!.id,
      channel.keys.map((key) => cipher.seal(key)),
      channel.keys.map(sha256Hex),
      channel.keys.map(lastFour),
    ],
  );
}

export interface TokenSeed {
  name: string;
  /** The token's value; a new one when absent. */
  secret?: string;
  /** None: no quota and no rate limit, so no Redis round trip for the token. */
  limits?: { quota?: number; rateLimit?: number };
}

/** Creates the token and returns it, as a client sends it. */
export async function seedToken(databaseUrl: string, token: TokenSeed): Promise<string> {
  const secret = token.secret ?? generateGatewayToken();
  await query(
    databaseUrl,
    `INSERT INTO "Token" (name, "keyHash", "lastFour", quota, "rateLimit", "updatedAt")
     VALUES ($1, $2, $3, $4, $5, now())`,
    [
      token.name,
      sha256Hex(secret),
      lastFour(secret),
      token.limits?.quota ?? null,
      token.limits?.rateLimit ?? null,
    ],
  );
  return secret;
}
