import { randomBytes } from 'node:crypto';
import { generateSecretKeySpec } from '@switchyard/security';
import { eventually, startApp, type AppProcess } from '@switchyard/testing';
import { chromium, type Browser, type Page } from 'playwright-core';

// The chat web app in a real browser (Debian's Chromium), against the real web server,
// chat backend and a mock provider: what an end user does and sees (seed §5.5, §7).

const CHROMIUM = '/usr/bin/chromium';
const UPSTREAM_KEY = 'sk-web-e2e';

describe('chat web app in a browser', () => {
  let mock: AppProcess;
  let chat: AppProcess;
  let web: AppProcess;
  let browser: Browser;
  let page: Page;
  const admin = { username: 'chatadmin', password: `pw-${randomBytes(6).toString('hex')}` };

  async function asAdmin(method: string, route: string, body?: unknown): Promise<unknown> {
    const login = await fetch(`${chat.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(admin),
    });
    const { token } = (await login.json()) as { token: string };
    const response = await fetch(`${chat.url}${route}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok)
      throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
    return response.json();
  }

  beforeAll(async () => {
    mock = await startApp('mock-upstream', { env: { MOCK_ACCOUNTS: UPSTREAM_KEY } });
    chat = await startApp('chat', {
      env: {
        SECRET_KEYS: generateSecretKeySpec('web'),
        CHAT_ADMIN_USERNAME: admin.username,
        CHAT_ADMIN_PASSWORD: admin.password,
      },
      readyPath: '/readyz',
    });
    web = await startApp('web', { env: { CHAT_URL: chat.url } });
    await asAdmin('POST', '/api/admin/api-keys', {
      platform: 'openai',
      address: mock.url,
      key: UPSTREAM_KEY,
      purpose: 'chat',
      enabled: true,
    });
    await asAdmin('POST', '/api/admin/models', {
      platform: 'openai',
      name: 'gpt-4o-mini',
      purpose: 'chat',
      open: true,
    });
    await asAdmin('POST', '/api/admin/models', {
      platform: 'openai',
      name: 'closed-model',
      purpose: 'chat',
      open: false,
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = await browser.newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([web, chat, mock].filter(Boolean).map((app) => app.stop()));
  });

  it('registers, sees only the models open to it, and gets a streamed reply that is kept', async () => {
    await page.goto(`${web.url}/register`);
    await page.getByLabel('Username').fill(`user${randomBytes(3).toString('hex')}`);
    await page.getByLabel('Password').fill('a long enough password');
    await page.getByRole('button', { name: 'Create account' }).click();

    const picker = page.getByLabel('Model');
    await picker.waitFor();
    const options = await picker.locator('option').allTextContents();
    expect(options.join(' ')).toContain('gpt-4o-mini');
    expect(options.join(' ')).not.toContain('closed-model');
    await picker.selectOption('gpt-4o-mini');

    // A slow stream, so the page can be seen filling in before it is done.
    await fetch(`${mock.url}/_mock/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: UPSTREAM_KEY, chunkDelayMs: 150, times: 1 }),
    });
    await page.getByRole('textbox', { name: 'Message' }).fill('hello from the browser');
    await page.getByRole('button', { name: 'Send' }).click();
    const log = page.getByRole('log', { name: 'Messages' });
    const partial = await eventually(
      async () => {
        const text = await log.innerText();
        return text.includes('Echo:') && !text.includes('Echo: hello from the browser')
          ? text
          : undefined;
      },
      10_000,
      'a partly streamed reply',
    );
    expect(partial).toContain('Echo:');
    await eventually(
      async () =>
        (await log.innerText()).includes('Echo: hello from the browser') ? true : undefined,
      10_000,
      'the whole reply',
    );

    await page.reload();
    await eventually(
      async () =>
        (await page.getByRole('log', { name: 'Messages' }).innerText()).includes(
          'Echo: hello from the browser',
        )
          ? true
          : undefined,
      10_000,
      'the reply kept after a reload',
    );
  });

  it("shows the upstream's failure with the provider's address, so the user can report it", async () => {
    await fetch(`${mock.url}/_mock/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: UPSTREAM_KEY, status: 500, times: 1 }),
    });
    await page.getByRole('textbox', { name: 'Message' }).fill('this one fails');
    await page.getByRole('button', { name: 'Send' }).click();
    const alert = page.getByRole('alert').first();
    await alert.waitFor();
    expect(await alert.innerText()).toContain(new URL(mock.url).host);
  });

  it('answers 502 with a readable page when the chat backend is down (seed §7)', async () => {
    await chat.stop();
    const response = await page.goto(`${web.url}/api/models`);
    expect(response?.status()).toBe(502);
    expect(await page.content()).toMatch(/API container is running/i);
  });
});
