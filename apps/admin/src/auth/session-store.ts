import { Inject, Injectable, Logger } from '@nestjs/common';
import { AdminEnv } from '@switchyard/config';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { generateSessionToken, sha256Hex } from '@switchyard/security';
import { unavailableWithoutRedis } from './redis-unavailable.js';

// Login sessions: an opaque `sess-…` token handed to the administrator, kept in Redis only
// as its SHA-256 with a time to live. Each administrator's session hashes are indexed so
// all of them can be revoked at once (password change, role change, deletion).

interface StoredSession {
  adminId: number;
  createdAt: number;
}

export interface IssuedSession {
  token: string;
  hash: string;
  expiresAt: Date;
}

const sessionKey = (hash: string) => `admin:session:${hash}`;
const indexKey = (adminId: number) => `admin:sessions-of:${adminId}`;

@Injectable()
export class SessionStore {
  private readonly logger = new Logger('SessionStore');

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly env: AdminEnv,
  ) {}

  issue(adminId: number): Promise<IssuedSession> {
    return unavailableWithoutRedis(this.logger, async () => {
      const token = generateSessionToken();
      const hash = sha256Hex(token);
      const ttl = this.env.SESSION_TTL_SECONDS;
      const stored: StoredSession = { adminId, createdAt: Date.now() };
      await this.exec(
        this.redis
          .multi()
          .set(sessionKey(hash), JSON.stringify(stored), 'EX', ttl)
          .sadd(indexKey(adminId), hash)
          .expire(indexKey(adminId), ttl),
      );
      return { token, hash, expiresAt: new Date(Date.now() + ttl * 1000) };
    });
  }

  /** The administrator a session token belongs to, or null when it is unknown or expired. */
  adminOf(hash: string): Promise<number | null> {
    return unavailableWithoutRedis(this.logger, async () => {
      const raw = await this.redis.get(sessionKey(hash));
      if (raw === null) return null;
      const stored = JSON.parse(raw) as Partial<StoredSession>;
      return typeof stored.adminId === 'number' ? stored.adminId : null;
    });
  }

  revoke(adminId: number, hash: string): Promise<void> {
    return unavailableWithoutRedis(this.logger, async () => {
      await this.exec(this.redis.multi().del(sessionKey(hash)).srem(indexKey(adminId), hash));
    });
  }

  /** Ends every session of the administrator, except `keep` when given. */
  revokeAll(adminId: number, keep?: string): Promise<number> {
    return unavailableWithoutRedis(this.logger, async () => {
      const hashes = (await this.redis.smembers(indexKey(adminId))).filter((h) => h !== keep);
      if (hashes.length === 0) return 0;
      const transaction = this.redis.multi().del(...hashes.map(sessionKey));
      transaction.srem(indexKey(adminId), ...hashes);
      const results = await this.exec(transaction);
      return Number(results[0] ?? 0);
    });
  }

  private async exec(transaction: ReturnType<RedisClient['multi']>): Promise<unknown[]> {
    const results = (await transaction.exec()) ?? [];
    const failed = results.find(([error]) => error !== null);
    if (failed?.[0]) throw failed[0];
    return results.map(([, value]) => value);
  }
}
