import { randomBytes } from 'node:crypto';
import { waitFor } from '@switchyard/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  accessibilityViolations,
  CHROMIUM,
  newContext,
  screenshot,
  screenshotFolder,
} from '../support/browser.js';
import { freshAccount, Stack, STACK_START_TIMEOUT_MS, uniqueName } from '../support/stack.js';

// The Fallbacks page of the gateway dashboard in a real browser (Debian's Chromium) against
// the real edge and admin (docs/routing.md, "Fallbacks across models"): an administrator sets
// a model's lists, is told next to the field when one names a model no channel serves, edits
// and removes them. Every state is checked with axe-core and saved in test/output/fallbacks.

const OUTPUT = screenshotFolder('fallbacks');

describe('fallbacks on the dashboard, in a browser', () => {
  const owner = { username: 'owner', password: `initial-${randomBytes(6).toString('hex')}` };
  const ownerPassword = `changed-${randomBytes(8).toString('hex')}`;
  const stack = new Stack({ admin: owner });
  const [primary, second, third] = [uniqueName('gpt'), uniqueName('claude'), uniqueName('gemini')];
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];

  const apiCall = async (method: string, path: string, body: unknown, token = '') => {
    const response = await fetch(`${stack.edge.url}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
  };

  async function checkPage(name: string): Promise<void> {
    await waitFor(
      async () => ((await page.locator('[aria-busy="true"]').count()) === 0 ? true : undefined),
      { what: `${name} loaded` },
    );
    await screenshot(page, OUTPUT, name);
    expect((await accessibilityViolations(page)).map((v) => `${name}: ${v}`)).toEqual([]);
  }

  beforeAll(async () => {
    await stack.start();
    const initial = (await apiCall('POST', '/api/auth/login', owner)).token as string;
    await apiCall(
      'POST',
      '/api/auth/password',
      { currentPassword: owner.password, newPassword: ownerPassword },
      initial,
    );
    for (const model of [primary, second, third])
      await stack.createChannel({ models: [model], keys: [await freshAccount(stack)] });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    const context = await newContext(browser, { viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text()))
        consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
    await page.goto(stack.edge.url);
    await page.getByLabel('Username').fill(owner.username);
    await page.getByLabel('Password', { exact: true }).fill(ownerPassword);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  }, STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await stack.stop();
  });

  it('sets a model’s lists, shows a refusal next to its field, edits and removes them', async () => {
    await page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Fallbacks', exact: true })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Fallbacks' }).waitFor();
    await page.getByText('No model has fallbacks yet.').waitFor();
    await checkPage('01-empty');

    const form = page.getByRole('form', { name: 'Set a model’s fallbacks' });
    await form.getByLabel('Model', { exact: true }).fill(primary);
    await form.getByLabel('Fallbacks', { exact: true }).fill(`${second}, no-such-model`);
    await form.getByRole('button', { name: 'Save fallbacks' }).click();
    // The API's word on the unknown model, next to the list that named it.
    await form.locator('.field-error', { hasText: /no-such-model.*no channel serves/ }).waitFor();
    await checkPage('02-unknown-model');

    await form.getByLabel('Fallbacks', { exact: true }).fill(`${second}, ${third}`);
    await form.getByLabel('On a context-window error').fill(third);
    await form.getByRole('button', { name: 'Save fallbacks' }).click();
    const row = page.getByRole('row', { name: new RegExp(primary) });
    await row.getByText(`${second} → ${third}`).waitFor();
    await checkPage('03-saved');

    await row.getByRole('button', { name: `Edit ${primary}` }).click();
    expect(await form.getByLabel('Fallbacks', { exact: true }).inputValue()).toBe(
      `${second}, ${third}`,
    );
    await form.getByLabel('Fallbacks', { exact: true }).fill(third);
    await form.getByRole('button', { name: 'Save fallbacks' }).click();
    await row.getByRole('cell', { name: third, exact: true }).first().waitFor();

    await row.getByRole('button', { name: `Remove ${primary}` }).click();
    await page.getByText('No model has fallbacks yet.').waitFor();
    expect(consoleErrors).toEqual([]);
  });
});
