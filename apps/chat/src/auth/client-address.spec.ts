import { clearRedisNamespace } from '@switchyard/testing';
import {
  newUser,
  resetChatData,
  startChat,
  type ChatHarness,
} from '../testing/chat-harness.fixture.js';

// The client address that login throttling counts is Fastify's `request.ip`: X-Forwarded-For
// is believed only when the direct peer is one of TRUSTED_PROXIES, and then the right-most
// hop that is not a trusted proxy is the client. The tests connect from loopback, as the web
// app does. Each instance counts in a Redis namespace of its own, cleared afterwards, so its
// delayed addresses (loopback among them) never reach another spec file.

const REDIS_URL = process.env.REDIS_URL!;

async function startThrottled(name: string, trustedProxies: string): Promise<ChatHarness> {
  return startChat({
    REDIS_PREFIX: `${process.env.REDIS_PREFIX}-${name}`.slice(0, 32),
    TRUSTED_PROXIES: trustedProxies,
    LOGIN_MAX_FAILURES_PER_ACCOUNT: '100',
    LOGIN_MAX_FAILURES_PER_IP: '2',
    // An address past its free failures stays delayed for the whole test, however slow the
    // machine: ten minutes, not the default second.
    LOGIN_FIRST_DELAY_SECONDS: '600',
  });
}

async function stop(chat: ChatHarness): Promise<void> {
  await chat.close();
  await clearRedisNamespace(REDIS_URL, chat.env.REDIS_PREFIX);
}

/** A login attempt sent through a proxy with this X-Forwarded-For (none when undefined). */
function attempt(chat: ChatHarness, username: string, password: string, forwardedFor?: string) {
  const call = chat.api.post('/api/auth/login');
  if (forwardedFor !== undefined) void call.set('x-forwarded-for', forwardedFor);
  return call.send({ username, password });
}

describe('client address: X-Forwarded-For from a trusted proxy', () => {
  let chat: ChatHarness;
  let user: { username: string };

  beforeAll(async () => {
    await resetChatData();
    chat = await startThrottled('xff', '127.0.0.1/32,::1/128,10.0.0.0/8');
    user = await newUser(chat.api, 'xff');
  });

  afterAll(async () => {
    await stop(chat);
  });

  it('is believed: failures count against the address the proxy reports', async () => {
    for (let i = 0; i < 2; i += 1) {
      await attempt(chat, `guess-${i}`, 'wrong-password', '198.51.100.10').expect(401);
    }
    await attempt(chat, user.username, 'a-good-password', '198.51.100.10').expect(429);
    await attempt(chat, user.username, 'a-good-password', '198.51.100.11').expect(200);
    // Neither the proxy itself nor a direct caller was counted.
    await attempt(chat, user.username, 'a-good-password').expect(200);
  });

  it('is read from the right: the right-most untrusted hop wins, whatever a client forged', async () => {
    // Each client put a different address first; its proxy, then one of ours, appended.
    await attempt(chat, 'guess-a', 'wrong-password', '203.0.113.1, 198.51.100.20, 10.1.2.3').expect(
      401,
    );
    await attempt(chat, 'guess-b', 'wrong-password', '203.0.113.2, 198.51.100.20').expect(401);
    await attempt(chat, user.username, 'a-good-password', '198.51.100.20').expect(429);
    for (const forged of ['203.0.113.1', '203.0.113.2', '10.1.2.3']) {
      await attempt(chat, user.username, 'a-good-password', forged).expect(200);
    }
  });
});

describe('client address: X-Forwarded-For from a peer that is not a trusted proxy', () => {
  let chat: ChatHarness;

  beforeAll(async () => {
    await resetChatData();
    // Loopback, where the test connects from, is not trusted here.
    chat = await startThrottled('untrusted', '10.0.0.0/8');
  });

  afterAll(async () => {
    await stop(chat);
  });

  it('is ignored: every failure counts against the peer', async () => {
    const user = await newUser(chat.api, 'untrusted');
    await attempt(chat, 'guess-c', 'wrong-password', '203.0.113.3').expect(401);
    await attempt(chat, 'guess-d', 'wrong-password', '203.0.113.4').expect(401);
    const locked = await attempt(chat, user.username, 'a-good-password', '203.0.113.5');
    expect(locked.status).toBe(429);
    expect(locked.body.error.code).toBe('too_many_attempts');
    await attempt(chat, user.username, 'a-good-password').expect(429);
  });
});
