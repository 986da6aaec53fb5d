import { Inject, Injectable } from '@nestjs/common';
import { ChatEnv } from '@switchyard/config';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { generateSessionToken, sha256Hex } from '@switchyard/security';
import { commit, withRedis } from '../common/redis.js';

// Sessions are opaque bearer tokens. Redis keeps only their SHA-256, with the user id and
// a TTL; a set per user lists them, so disabling a user ends every session at once.

const SESSION_TOKEN = /^sess-[A-Za-z0-9]{43}$/;

const STORE = 'The session store';

const sessionKey = (hash: string) => `chat:session:${hash}`;
const userSessionsKey = (userId: number) => `chat:user-sessions:${userId}`;

export interface IssuedSession {
  token: string;
  expiresAt: Date;
}

export interface SessionRecord {
  userId: number;
  hash: string;
}

@Injectable()
export class SessionStore {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly env: ChatEnv,
  ) {}

  async issue(userId: number): Promise<IssuedSession> {
    const token = generateSessionToken();
    const hash = sha256Hex(token);
    const ttl = this.env.SESSION_TTL_SECONDS;
    await withRedis(STORE, () =>
      commit(
        this.redis
          .multi()
          .set(sessionKey(hash), String(userId), 'EX', ttl)
          .sadd(userSessionsKey(userId), hash)
          .expire(userSessionsKey(userId), ttl),
      ),
    );
    return { token, expiresAt: new Date(Date.now() + ttl * 1000) };
  }

  /** The session a bearer token stands for, or null when it is unknown or expired. */
  async find(token: string): Promise<SessionRecord | null> {
    if (!SESSION_TOKEN.test(token)) return null;
    const hash = sha256Hex(token);
    const userId = await withRedis(STORE, () => this.redis.get(sessionKey(hash)));
    return userId === null ? null : { userId: Number(userId), hash };
  }

  async end(userId: number, hash: string): Promise<void> {
    await withRedis(STORE, () =>
      commit(this.redis.multi().del(sessionKey(hash)).srem(userSessionsKey(userId), hash)),
    );
  }

  async endAll(userId: number): Promise<void> {
    await withRedis(STORE, async () => {
      const hashes = await this.redis.smembers(userSessionsKey(userId));
      await commit(this.redis.multi().del(...hashes.map(sessionKey), userSessionsKey(userId)));
    });
  }
}
