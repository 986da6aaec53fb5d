import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { waitFor } from '@switchyard/testing';
import { type Browser, type Page, type Request } from 'playwright-core';
import {
  accessibilityViolations,
  newContext,
  screenshot,
  screenshotFolder,
} from '../support/browser.js';
import {
  connectChromium,
  UPSTREAM_KEYS,
  webStackForSuite,
  type WebStack,
} from '../support/web-stack.js';

// Generated media and long conversations in a real browser (Debian's Chromium), against the
// real web server, chat backend and mock provider, whose drawings and songs are real files
// it serves itself (docs/architecture.md, "The chat web app").

const UPSTREAM_KEY = UPSTREAM_KEYS.media;
const SCREENSHOTS = screenshotFolder('web-media');
/** 61 questions and their answers: more than two pages of 50. */
const QUESTIONS = 61;

describe('generated media and long conversations in the chat web app', () => {
  let mock: WebStack['mock'];
  let chat: WebStack['chat'];
  let web: WebStack['web'];
  let admin: WebStack['admin'];
  let browser: Browser;
  let page: Page;
  let token: string;
  const user = {
    username: `media${randomBytes(3).toString('hex')}`,
    password: 'a long enough password',
  };

  async function as(
    bearer: string | null,
    method: string,
    route: string,
    body?: unknown,
  ): Promise<Response> {
    const response = await fetch(`${chat.url}${route}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok)
      throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
    return response;
  }

  const login = async (credentials: { username: string; password: string }) =>
    ((await (await as(null, 'POST', '/api/auth/login', credentials)).json()) as { token: string })
      .token;

  /** The conversation's page, signed in as the user. */
  async function open(conversation: string): Promise<void> {
    await page.goto(`${web.url}/c/${conversation}`);
  }

  async function newConversation(model: string): Promise<string> {
    const created = await as(token, 'POST', '/api/conversations', { title: model, model });
    return ((await created.json()) as { id: string }).id;
  }

  async function ask(content: string): Promise<void> {
    await page.getByRole('textbox', { name: 'Message' }).fill(content);
    await page.getByRole('button', { name: 'Send' }).click();
  }

  beforeAll(async () => {
    const stack = await webStackForSuite();
    ({ mock, chat, web, admin } = stack);
    const adminToken = await login(admin);
    for (const purpose of ['chat', 'drawing', 'music']) {
      await as(adminToken, 'POST', '/api/admin/api-keys', {
        platform: 'openai',
        address: mock.url,
        key: UPSTREAM_KEY,
        purpose,
        enabled: true,
      });
    }
    for (const [name, purpose] of [
      ['gpt-4o-mini', 'chat'],
      ['dall-e-3', 'drawing'],
      ['suno-v3', 'music'],
    ]) {
      await as(adminToken, 'POST', '/api/admin/models', {
        platform: 'openai',
        name,
        purpose,
        open: true,
      });
    }
    await as(null, 'POST', '/api/auth/register', user);
    token = await login(user);
    browser = await connectChromium(stack);
    const context = await newContext(browser, { acceptDownloads: true });
    await context.addInitScript(
      `localStorage.setItem('switchyard.chat.token', ${JSON.stringify(token)})`,
    );
    page = await context.newPage();
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('shows a drawn image that loads, named by its prompt, opened full size and downloaded', async () => {
    await open(await newConversation('dall-e-3'));
    await page.getByLabel('Model').selectOption('dall-e-3');
    await ask('a lighthouse at dusk');
    const image = page.locator('.message-assistant img');
    await image.waitFor();
    expect(await image.getAttribute('alt')).toBe('Generated image 1 for: a lighthouse at dusk');
    const source = String(await image.getAttribute('src'));
    expect(source).toMatch(new RegExp(`^${mock.url}/media/images/[0-9a-f]{16}\\.png$`));
    // Decoded, not broken: the page's policy lets the mock's host in.
    const width = await waitFor(
      async () =>
        (await image.evaluate(
          (element) =>
            (element as unknown as { complete: boolean }).complete &&
            (element as unknown as { naturalWidth: number }).naturalWidth,
        )) || undefined,
      { what: 'the image decoded' },
    );
    expect(width).toBe(256);

    const full = page.getByRole('link', { name: 'Open full size image 1' });
    expect(await full.getAttribute('href')).toBe(source);
    expect(await full.getAttribute('target')).toBe('_blank');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download image 1' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^[0-9a-f]{16}\.png$/);
    const saved = await readFile(await download.path());
    expect(saved.subarray(1, 4).toString('latin1')).toBe('PNG');

    // After a reload the prompt comes from the question before the reply.
    await page.reload();
    await image.waitFor();
    expect(await image.getAttribute('alt')).toBe('Generated image 1 for: a lighthouse at dusk');
    await screenshot(page, SCREENSHOTS, 'drawing-reply');
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('gives a song an audio player whose file loads, and a download', async () => {
    await open(await newConversation('suno-v3'));
    await page.getByLabel('Model').selectOption('suno-v3');
    await ask('a song about rain');
    const audio = page.locator('.message-assistant audio');
    await audio.waitFor();
    expect(await audio.getAttribute('controls')).not.toBeNull();
    expect(await audio.getAttribute('aria-label')).toBe('Song 1');
    const source = String(await audio.getAttribute('src'));
    expect(source).toMatch(new RegExp(`^${mock.url}/media/audio/[0-9a-f]{16}\\.wav$`));
    const duration = await waitFor(
      async () =>
        (await audio.evaluate(
          (element) => (element as unknown as { duration: number }).duration,
        )) || undefined,
      { what: 'the song loaded' },
    );
    expect(duration).toBeCloseTo(2, 1);
    // The reply's own link stays, as Markdown.
    await page.locator('.message-assistant a', { hasText: 'Listen to the song' }).waitFor();

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download song 1' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^[0-9a-f]{16}\.wav$/);
    const saved = await readFile(await download.path());
    expect(saved.subarray(0, 4).toString('latin1')).toBe('RIFF');
    await screenshot(page, SCREENSHOTS, 'music-reply');
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('opens a long conversation on its latest page and reads older ones on the way up, in order', async () => {
    const conversation = await newConversation('gpt-4o-mini');
    for (let i = 1; i <= QUESTIONS; i += 1) {
      await as(token, 'POST', `/api/conversations/${conversation}/messages`, {
        content: `question ${i}`,
      }).then((response) => response.text());
    }
    const reads: string[] = [];
    const listen = (request: Request) => {
      const url = new URL(request.url());
      if (request.method() === 'GET' && url.pathname.endsWith(`${conversation}/messages`))
        reads.push(url.search);
    };
    page.on('request', listen);
    await open(conversation);
    const log = page.getByRole('log', { name: 'Messages' });
    const articles = log.locator('article');
    await log.locator('article', { hasText: `Echo: question ${QUESTIONS}` }).waitFor();
    expect(reads).toEqual(['?start=latest&pageSize=50']);
    expect(await articles.count()).toBe(50);
    // 122 messages: the latest 50 start with the 37th question.
    expect(await articles.first().innerText()).toContain('question 37');
    // Opened at the end.
    expect(
      await log.evaluate((element) => {
        const box = element as unknown as {
          scrollTop: number;
          scrollHeight: number;
          clientHeight: number;
        };
        return box.scrollHeight - box.scrollTop - box.clientHeight;
      }),
    ).toBeLessThan(2);
    expect(await accessibilityViolations(page)).toEqual([]);

    // Scrolling to the top reads the page before, and what was first stays in view.
    const wasFirst = log.locator('article', { hasText: /^You\s*question 37$/ });
    await log.evaluate((element) => ((element as unknown as { scrollTop: number }).scrollTop = 0));
    await waitFor(async () => ((await articles.count()) === 100 ? true : undefined));
    expect(reads[1]).toMatch(/^\?start=latest&pageSize=50&before=\d+$/);
    // Settled: the position is kept, and no further page was read.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(reads).toHaveLength(2);
    const [logBox, firstBox] = [await log.boundingBox(), await wasFirst.boundingBox()];
    expect(firstBox!.y).toBeGreaterThanOrEqual(logBox!.y - 1);
    expect(firstBox!.y).toBeLessThan(logBox!.y + logBox!.height);
    // The viewport only: a full-page screenshot makes the list as tall as its content, and a
    // list with room to spare reads the page before.
    await page.screenshot({ path: path.join(SCREENSHOTS, 'long-conversation-scrolled-up.png') });

    // The button reads the last page, then goes. It is pressed where it is: scrolling the
    // list up to it (as a pointer click does first) would itself read the page, the path
    // checked above, and the button could go before the click lands.
    const earlier = page.getByRole('button', { name: 'Load earlier messages' });
    await earlier.dispatchEvent('click');
    await waitFor(async () => ((await articles.count()) === 122 ? true : undefined));
    await earlier.waitFor({ state: 'detached' });
    expect(reads).toHaveLength(3);
    const expected = Array.from({ length: QUESTIONS }, (_, i) => [
      `question ${i + 1}`,
      `Echo: question ${i + 1}`,
    ]).flat();
    const shown = (await log.locator('article .message-text').allInnerTexts()).map((text) =>
      text.trim(),
    );
    expect(shown).toEqual(expected);
    page.off('request', listen);
  });

  it('streams a new reply into a long conversation without redrawing the messages above it', async () => {
    const log = page.getByRole('log', { name: 'Messages' });
    // Every message shown so far is marked; the observer counts changes inside them.
    await log.evaluate((element) => {
      const scope = globalThis as unknown as {
        MutationObserver: new (callback: (records: { target: unknown }[]) => void) => {
          observe(node: unknown, options: Record<string, boolean>): void;
        };
        olderChanges: number;
      };
      const root = element as unknown as {
        querySelectorAll(selector: string): ArrayLike<{ contains(node: unknown): boolean }>;
      };
      const older = Array.from(root.querySelectorAll('article'));
      for (const article of older) (article as unknown as { marked: boolean }).marked = true;
      scope.olderChanges = 0;
      new scope.MutationObserver((records) => {
        for (const record of records) {
          if (older.some((article) => article.contains(record.target))) scope.olderChanges += 1;
        }
      }).observe(element, {
        subtree: true,
        childList: true,
        characterData: true,
        attributes: true,
      });
    });
    await fetch(`${mock.url}/_mock/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: UPSTREAM_KEY, chunkDelayMs: 60, times: 1 }),
    });
    const question = 'one more question with quite a few words so that it streams in many chunks';
    await ask(question);
    await log.locator('article', { hasText: `Echo: ${question}` }).waitFor();
    const articles = log.locator('article');
    expect(await articles.count()).toBe(124);
    const still = await log.evaluate((element) => {
      const root = element as unknown as {
        querySelectorAll(selector: string): ArrayLike<{ marked?: boolean }>;
      };
      return Array.from(root.querySelectorAll('article')).filter((a) => a.marked).length;
    });
    // The same 122 elements, untouched.
    expect(still).toBe(122);
    expect(await page.evaluate('globalThis.olderChanges')).toBe(0);
  });
});
