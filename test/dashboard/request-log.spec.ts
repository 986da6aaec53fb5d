import { randomBytes } from 'node:crypto';
import { query, waitFor } from '@switchyard/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  accessibilityViolations,
  CHROMIUM,
  newPage,
  screenshot,
  screenshotFolder,
} from '../support/browser.js';
import { overflowingElements } from '../support/layout.js';
import { freshAccount, Stack, STACK_START_TIMEOUT_MS, uniqueName } from '../support/stack.js';

// The dashboard's Request log page in Chromium against the real suite: an owner turns the
// log on for a token, sees that token's request listed and opens its bodies (redacted);
// a viewer has no such page. Every state is checked with axe-core and saved as a
// screenshot in test/output/request-log.

const OUTPUT = screenshotFolder('request-log');

describe('request log in the dashboard', () => {
  const owner = { username: 'owner', password: `initial-${randomBytes(6).toString('hex')}` };
  const viewer = { username: 'viewer1', password: `viewer-${randomBytes(8).toString('hex')}` };
  const stack = new Stack({ admin: owner, metering: true });
  const tokenName = uniqueName('logged-app');
  const model = uniqueName('logged-model');
  const secret = `sk-${randomBytes(24).toString('hex')}`;
  let browser: Browser;
  let page: Page;
  let token: { id: number; key: string };
  const pageErrors: string[] = [];

  async function checkPage(target: Page, name: string): Promise<void> {
    await waitFor(
      async () => ((await target.locator('[aria-busy="true"]').count()) === 0 ? true : undefined),
      { what: `${name} loaded` },
    );
    await screenshot(target, OUTPUT, name);
    expect((await accessibilityViolations(target)).map((v) => `${name}: ${v}`)).toEqual([]);
  }

  async function signIn(target: Page, username: string, password: string): Promise<void> {
    await target.goto(stack.edge.url);
    await target.getByLabel('Username').fill(username);
    await target.getByLabel('Password', { exact: true }).fill(password);
    await target.getByRole('button', { name: 'Sign in' }).click();
    await target.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    const next = `changed-${randomBytes(8).toString('hex')}`;
    await target.getByLabel('Current password').fill(password);
    await target.getByLabel('New password', { exact: true }).fill(next);
    await target.getByLabel('Repeat the new password').fill(next);
    await target.getByRole('button', { name: 'Change password' }).click();
    await target.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  }

  const nav = (target: Page) => target.getByRole('navigation', { name: 'Main' });

  async function chat(content: string): Promise<void> {
    const response = await fetch(`${stack.edge.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
    });
    await response.arrayBuffer();
    expect(response.status).toBe(200);
  }

  beforeAll(async () => {
    await stack.start();
    await stack.createChannel({ models: [model], keys: [await freshAccount(stack)] });
    token = await stack.createToken({ name: tokenName });
    // Used before the log is on: the edge has the token cached without the flag, and must
    // learn of the switch from the admin's event.
    await chat('before the log');
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    page = await newPage(browser, { viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await signIn(page, owner.username, owner.password);
  }, STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await stack.stop();
  });

  it('says nothing is logged, then turns the log on for a token', async () => {
    await nav(page).getByRole('link', { name: 'Request log', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Request log' }).waitFor();
    await page.getByText('No token and no team: nothing is logged.').waitFor();
    await checkPage(page, '01-request-log-off');

    const form = page.getByRole('form', { name: 'Turn the request log on for a token' });
    await form.getByLabel('Token to log').selectOption({ label: tokenName });
    await form.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('button', { name: `Turn off for token ${tokenName}` }).waitFor();
    await checkPage(page, '02-request-log-on');
  });

  it('lists the token’s next request and shows its bodies, redacted', async () => {
    // The edge drops its cached token on the admin's event: requests after it are logged.
    await waitFor(
      async () => {
        await chat(`hello, my key is ${secret}`);
        const rows = await query(
          stack.databaseUrl,
          `SELECT 1 FROM "RequestLog" WHERE "tokenId" = $1`,
          [token.id],
        );
        return rows.length > 0 ? true : undefined;
      },
      { what: 'a logged request' },
    );
    const filter = page.getByRole('search', { name: 'Filter logged requests' });
    await filter.getByLabel('Token').selectOption({ label: tokenName });
    await filter.getByRole('button', { name: 'Filter' }).click();
    const row = page.getByRole('row', { name: new RegExp(`${tokenName}.*${model}`) }).first();
    await row.waitFor();
    expect(await row.innerText()).toContain('200');
    await checkPage(page, '03-request-log-list');

    await row.getByRole('button', { name: /Bodies/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Logged request' });
    const request = dialog.getByLabel('Request body');
    await request.waitFor();
    const sent = await request.innerText();
    expect(sent).toContain('hello, my key is sk-[redacted]');
    expect(sent).not.toContain(secret.slice(3));
    expect(await dialog.getByLabel('Answer body').innerText()).toContain('choices');
    await checkPage(page, '04-request-log-bodies');
    await dialog.getByRole('button', { name: 'Close' }).click();
  });

  it('fits 375 px, with no column cut off', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Request log' }).waitFor();
    await checkPage(page, '05-request-log-375px');
    expect(await overflowingElements(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('is no page of a viewer’s', async () => {
    // Added through the API as an owner would, with an initial password to change.
    const session = await page.evaluate<string | null>(
      `localStorage.getItem('switchyard.dashboard.session')`,
    );
    const added = await fetch(`${stack.edge.url}/api/admins`, {
      method: 'POST',
      headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...viewer, role: 'viewer' }),
    });
    expect(added.status).toBe(201);
    const viewerPage = await newPage(browser, { viewport: { width: 1280, height: 900 } });
    await signIn(viewerPage, viewer.username, viewer.password);
    expect(await nav(viewerPage).getByRole('link', { name: 'Request log' }).count()).toBe(0);
    await viewerPage.goto(`${stack.edge.url}/request-log`);
    await viewerPage.getByRole('heading', { level: 1, name: 'Page not found' }).waitFor();
    expect(pageErrors).toEqual([]);
  });
});
