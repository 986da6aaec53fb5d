import { createRedisClient, redisReady, type RedisClient } from '@switchyard/messaging';
import { sha256Hex } from '@switchyard/security';
import { clearRedisNamespace, testRedisPrefix } from '@switchyard/testing';
import { Redis } from 'ioredis';
import { SessionStore } from './session-store.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TTL = 600;

describe('SessionStore (real Redis)', () => {
  const prefix = testRedisPrefix();
  let redis: RedisClient;
  let store: SessionStore;
  let subjects = 0;
  const nextSubject = () => (subjects += 1);

  beforeAll(async () => {
    redis = createRedisClient({ url, prefix });
    await redisReady(redis);
    store = new SessionStore(redis, { namespace: 'admin', ttlSeconds: TTL });
  });

  afterAll(async () => {
    await clearRedisNamespace(url, prefix);
    redis.disconnect();
  });

  it('issues an opaque token and finds its subject by it', async () => {
    const subject = nextSubject();
    const before = Date.now();
    const issued = await store.issue(subject);
    expect(issued.token).toMatch(/^sess-[A-Za-z0-9]{43}$/);
    expect(issued.expiresAt.getTime()).toBeGreaterThanOrEqual(before + TTL * 1000);
    expect(issued.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + TTL * 1000);
    expect(await store.find(issued.token)).toEqual({ subject, hash: sha256Hex(issued.token) });
  });

  it('keeps only the hash of a token in its namespace, with the time to live', async () => {
    const issued = await store.issue(nextSubject());
    const key = `admin:{sessions}:session:${sha256Hex(issued.token)}`;
    const ttl = await redis.ttl(key);
    expect(ttl).toBeGreaterThan(TTL - 60);
    expect(ttl).toBeLessThanOrEqual(TTL);
    // Everything the store wrote, read without the client's key prefix.
    const raw = new Redis(url);
    try {
      const keys = await raw.keys(`${prefix}:admin:*`);
      const values = await Promise.all(
        keys.map((k) => (k.includes(':session:') ? raw.get(k) : raw.smembers(k))),
      );
      expect(keys).toContain(`${prefix}:${key}`);
      expect(JSON.stringify([keys, values])).not.toContain(issued.token);
    } finally {
      raw.disconnect();
    }
    // Expiry is Redis's: once the key is gone the session is.
    await redis.del(key);
    expect(await store.find(issued.token)).toBeNull();
  });

  it('finds nothing for unknown tokens, text not shaped like a token, or a foreign value', async () => {
    expect(await store.find(undefined)).toBeNull();
    expect(await store.find(`sess-${'A'.repeat(43)}`)).toBeNull();
    const issued = await store.issue(nextSubject());
    expect(await store.find(`${issued.token} `)).toBeNull();
    expect(await store.find(issued.token.slice(0, -1))).toBeNull();
    // A value written in another layout (an earlier release) is no session.
    await redis.set(`admin:{sessions}:session:${sha256Hex(issued.token)}`, '{"adminId":1}');
    expect(await store.find(issued.token)).toBeNull();
  });

  it('ends one session, leaving the others of the subject', async () => {
    const subject = nextSubject();
    const first = await store.issue(subject);
    const second = await store.issue(subject);
    const found = await store.find(first.token);
    await store.end(subject, found!.hash);
    expect(await store.find(first.token)).toBeNull();
    expect(await store.find(second.token)).toMatchObject({ subject });
  });

  it('ends every session of a subject at once, and no one else’s', async () => {
    const subject = nextSubject();
    const other = nextSubject();
    const tokens = [
      await store.issue(subject),
      await store.issue(subject),
      await store.issue(subject),
    ];
    const bystander = await store.issue(other);
    expect(await store.endAll(subject)).toBe(3);
    for (const { token } of tokens) expect(await store.find(token)).toBeNull();
    expect(await store.find(bystander.token)).toMatchObject({ subject: other });
    expect(await store.endAll(subject)).toBe(0);
    const next = await store.issue(subject);
    expect(await store.find(next.token)).toMatchObject({ subject });
  });

  it('can keep one session when ending the others (a password change)', async () => {
    const subject = nextSubject();
    const current = await store.issue(subject);
    const others = [await store.issue(subject), await store.issue(subject)];
    const kept = await store.find(current.token);
    expect(await store.endAll(subject, kept!.hash)).toBe(2);
    expect(await store.find(current.token)).toEqual(kept);
    for (const { token } of others) expect(await store.find(token)).toBeNull();
    // Its index still holds the kept session, so a later end-all reaches it.
    expect(await store.endAll(subject)).toBe(1);
    expect(await store.find(current.token)).toBeNull();
  });

  it('counts only live sessions as ended: an expired one in the index is not', async () => {
    const subject = nextSubject();
    const live = await store.issue(subject);
    const expired = await store.issue(subject);
    await redis.del(`admin:{sessions}:session:${sha256Hex(expired.token)}`);
    expect(await store.endAll(subject)).toBe(1);
    expect(await store.find(live.token)).toBeNull();
  });

  it('keeps the sessions of two namespaces apart, even for the same subject id', async () => {
    const chat = new SessionStore(redis, { namespace: 'chat', ttlSeconds: TTL });
    const subject = nextSubject();
    const adminSession = await store.issue(subject);
    const chatSession = await chat.issue(subject);
    expect(await chat.find(adminSession.token)).toBeNull();
    expect(await store.find(chatSession.token)).toBeNull();
    expect(await chat.endAll(subject)).toBe(1);
    expect(await store.find(adminSession.token)).toMatchObject({ subject });
  });
});
