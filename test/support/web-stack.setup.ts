import { randomBytes } from 'node:crypto';
import { generateSecretKeySpec } from '@switchyard/security';
import {
  clearRedisNamespace,
  createTestDatabase,
  freePort,
  startApp,
  testRedisPrefix,
  type AppProcess,
  type TestDatabase,
} from '@switchyard/testing';
import { chromium, type Browser } from 'playwright-core';

// The Jest globalSetup of the web project (test/jest.config.mjs): one chat stack for every
// browser suite of a run (test/web), the mock provider, the chat backend on a database of
// its own, the web server and a Chromium, started once instead of once per suite. The
// suites take it with `webStackForSuite` (web-stack.ts); web-stack.teardown.ts stops it.
// Jest loads this file outside the suites' module mapping, so it imports packages only.

/** Generous: the stack starts once for all the suites, on machines that may be busy. */
const START_TIMEOUT_MS = 90_000;

/** Debian's Chromium, as support/browser.ts's CHROMIUM (which this file cannot import). */
const CHROMIUM = '/usr/bin/chromium';

/** Where the setup leaves the stack's addresses for the suites (Jest passes it on). */
export const DESCRIPTION_VARIABLE = 'SWITCHYARD_WEB_STACK';

/**
 * The mock provider's accounts, one per suite: faults and request logs are kept per account,
 * and `/_mock/reset` returns the mock to exactly these.
 */
export const UPSTREAM_KEYS = {
  chatApp: 'sk-web-e2e',
  images: 'sk-web-images',
  media: 'sk-web-media',
} as const;

export interface WebStack {
  mock: { url: string };
  chat: { url: string };
  web: { url: string };
  /** The chat's first administrator, the only user an emptied chat keeps. */
  admin: { username: string; password: string };
  databaseUrl: string;
  /** Chromium's DevTools address: suites connect over CDP, each in contexts of its own. */
  chromium: string;
}

export interface StartedWebStack {
  stop(): Promise<void>;
}

export async function startWebStack(): Promise<StartedWebStack> {
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const redisPrefix = testRedisPrefix();
  const admin = { username: 'chatadmin', password: `pw-${randomBytes(6).toString('hex')}` };
  const apps: AppProcess[] = [];
  let database: TestDatabase | undefined;
  let browser: Browser | undefined;
  const stop = async () => {
    await browser?.close();
    await Promise.all(apps.reverse().map((app) => app.stop()));
    await clearRedisNamespace(redisUrl, redisPrefix);
    await database?.drop();
  };
  try {
    // A database of its own: the chat service makes CHAT_ADMIN_USERNAME its first
    // administrator only on a database that has none yet.
    database = await createTestDatabase();
    const mock = await startApp('mock-upstream', {
      env: { MOCK_ACCOUNTS: Object.values(UPSTREAM_KEYS).join(',') },
      timeoutMs: START_TIMEOUT_MS,
    });
    apps.push(mock);
    const chat = await startApp('chat', {
      env: {
        DATABASE_URL: database.url,
        REDIS_URL: redisUrl,
        REDIS_PREFIX: redisPrefix,
        SECRET_KEYS: generateSecretKeySpec('web'),
        CHAT_ADMIN_USERNAME: admin.username,
        CHAT_ADMIN_PASSWORD: admin.password,
      },
      readyPath: '/readyz',
      timeoutMs: START_TIMEOUT_MS,
    });
    apps.push(chat);
    const web = await startApp('web', {
      // The mock serves the drawings and songs it makes itself.
      env: { CHAT_URL: chat.url, WEB_MEDIA_SOURCES: `https:,${mock.url}` },
      timeoutMs: START_TIMEOUT_MS,
    });
    apps.push(web);
    const debuggingPort = await freePort();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        // The audio player loads its file without a sound device.
        '--autoplay-policy=no-user-gesture-required',
        `--remote-debugging-port=${debuggingPort}`,
      ],
    });
    const description: WebStack = {
      mock: { url: mock.url },
      chat: { url: chat.url },
      web: { url: web.url },
      admin,
      databaseUrl: database.url,
      chromium: `http://127.0.0.1:${debuggingPort}`,
    };
    process.env[DESCRIPTION_VARIABLE] = JSON.stringify(description);
    return { stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export default async function setup(): Promise<void> {
  // Jest runs the teardown in this same global context: that is how it finds the stack.
  (globalThis as { webStack?: StartedWebStack }).webStack = await startWebStack();
}
