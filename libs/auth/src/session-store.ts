import { generateSessionToken, sha256Hex } from '@switchyard/security';
import type { Cluster, Redis } from 'ioredis';
import { commit, withRedis } from './redis-unavailable.js';

// Login sessions: an opaque `sess-…` token handed to the person signing in, kept in Redis
// only as its SHA-256, holding the subject's id, with a time to live. A set per subject
// lists its session hashes, so all of them can be ended at once (password change,
// disabling, a change of role).

const SESSION_TOKEN = /^sess-[A-Za-z0-9]{43}$/;
const SUBJECT_ID = /^\d+$/;
const STORE = 'The session store';

export interface SessionStoreOptions {
  /** Keys go under `<namespace>:` (inside the installation's Redis prefix): `admin`, `chat`. */
  namespace: string;
  ttlSeconds: number;
}

export interface IssuedSession {
  token: string;
  expiresAt: Date;
}

export interface FoundSession {
  /** The id of the user or administrator the session was issued to. */
  subject: number;
  /** SHA-256 of the token: what `end` and `endAll(keep)` take. */
  hash: string;
}

export class SessionStore {
  private readonly ttlSeconds: number;
  private readonly sessionKey: (hash: string) => string;
  private readonly indexKey: (subject: number) => string;

  constructor(
    private readonly redis: Redis | Cluster,
    options: SessionStoreOptions,
  ) {
    this.ttlSeconds = options.ttlSeconds;
    this.sessionKey = (hash) => `${options.namespace}:{sessions}:session:${hash}`;
    this.indexKey = (subject) => `${options.namespace}:{sessions}:user-sessions:${subject}`;
  }

  async issue(subject: number): Promise<IssuedSession> {
    const token = generateSessionToken();
    const hash = sha256Hex(token);
    const index = this.indexKey(subject);
    await withRedis(STORE, () =>
      commit(
        this.redis
          .multi()
          .set(this.sessionKey(hash), String(subject), 'EX', this.ttlSeconds)
          .sadd(index, hash)
          .expire(index, this.ttlSeconds),
      ),
    );
    return { token, expiresAt: new Date(Date.now() + this.ttlSeconds * 1000) };
  }

  /**
   * The live session a bearer token stands for, or null when it is unknown or expired.
   * Text not shaped like one of our tokens is refused without asking Redis.
   */
  async find(token: string | undefined): Promise<FoundSession | null> {
    if (token === undefined || !SESSION_TOKEN.test(token)) return null;
    const hash = sha256Hex(token);
    const subject = await withRedis(STORE, () => this.redis.get(this.sessionKey(hash)));
    return subject !== null && SUBJECT_ID.test(subject) ? { subject: Number(subject), hash } : null;
  }

  /** Ends one session (logout). */
  async end(subject: number, hash: string): Promise<void> {
    await withRedis(STORE, () =>
      commit(this.redis.multi().del(this.sessionKey(hash)).srem(this.indexKey(subject), hash)),
    );
  }

  /**
   * Ends every session of the subject, except `keep` (a session hash) when given: a password
   * change keeps the session that made it. Returns how many live sessions were ended.
   */
  async endAll(subject: number, keep?: string): Promise<number> {
    return withRedis(STORE, async () => {
      const index = this.indexKey(subject);
      const hashes = (await this.redis.smembers(index)).filter((hash) => hash !== keep);
      if (hashes.length === 0) return 0;
      const [ended] = await commit(
        this.redis
          .multi()
          .del(...hashes.map(this.sessionKey))
          .srem(index, ...hashes),
      );
      return Number(ended ?? 0);
    });
  }
}
