import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { waitFor, query } from '@switchyard/testing';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import {
  accessibilityViolations,
  CHROMIUM,
  newContext,
  screenshot,
  screenshotFolder,
} from '../support/browser.js';
import { overflowingElements } from '../support/layout.js';
import { Stack, freshAccount, uniqueName, STACK_START_TIMEOUT_MS } from '../support/stack.js';

// The gateway dashboard in a real browser (Debian's Chromium) against the real edge,
// admin, router, metering, Postgres, Redis and mock-upstream: what an operator does on
// first start, and what a viewer may not do. Every page is checked with axe-core and
// saved as a screenshot in test/output/dashboard.

const OUTPUT = screenshotFolder('dashboard');
const FIRST_LOAD_BUDGET_BYTES = 200 * 1024;

describe('gateway dashboard in a browser', () => {
  const owner = { username: 'owner', password: `initial-${randomBytes(6).toString('hex')}` };
  const ownerPassword = `changed-${randomBytes(8).toString('hex')}`;
  const viewer = { username: 'viewer1', password: `viewer-${randomBytes(8).toString('hex')}` };
  const stack = new Stack({ admin: owner, metering: true });
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];
  const channelName = uniqueName('relay');
  const tokenName = uniqueName('app');
  // A model no default price covers (the mock answers any name).
  const unpricedModel = uniqueName('acme-chat');
  let healthyKey = '';
  let bannedKey = '';
  let tokenValue = '';

  /** Fails on any serious or critical axe-core violation on the page as it is. */
  async function assertAccessible(target: Page, name: string): Promise<void> {
    expect((await accessibilityViolations(target)).map((v) => `${name}: ${v}`)).toEqual([]);
  }

  async function visit(target: Page, link: string, heading: string | RegExp): Promise<void> {
    await target
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: link, exact: true })
      .click();
    await target.getByRole('heading', { level: 1, name: heading }).waitFor();
  }

  async function checkPage(target: Page, name: string): Promise<void> {
    // Loading rows go away before the page is judged.
    await waitFor(
      async () => ((await target.locator('[aria-busy="true"]').count()) === 0 ? true : undefined),
      { what: `${name} loaded` },
    );
    await screenshot(target, OUTPUT, name);
    await assertAccessible(target, name);
  }

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const created = await newContext(browser, {
      viewport: { width: 1280, height: 900 },
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    const opened = await created.newPage();
    opened.on('console', (message) => {
      // Chromium reports every 4xx answer to fetch as a console error; a 400 the page
      // provokes on purpose (a bad form, below) is not an error of the page.
      if (message.type() !== 'error' || /status of 400/.test(message.text())) return;
      consoleErrors.push(`${opened.url()}: ${message.text()}`);
    });
    opened.on('pageerror', (error) => consoleErrors.push(`${opened.url()}: ${error.message}`));
    return { context: created, page: opened };
  }

  async function signIn(target: Page, username: string, password: string): Promise<void> {
    await target.goto(stack.edge.url);
    await target.getByLabel('Username').fill(username);
    await target.getByLabel('Password', { exact: true }).fill(password);
    await target.getByRole('button', { name: 'Sign in' }).click();
  }

  async function changePassword(target: Page, current: string, next: string): Promise<void> {
    await target.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await target.getByLabel('Current password').fill(current);
    await target.getByLabel('New password', { exact: true }).fill(next);
    await target.getByLabel('Repeat the new password').fill(next);
    await target.getByRole('button', { name: 'Change password' }).click();
  }

  beforeAll(async () => {
    await stack.start();
    healthyKey = await freshAccount(stack);
    bannedKey = await freshAccount(stack);
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
    ({ page } = await newPage());
  }, STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await stack.stop();
  });

  describe('served by the edge', () => {
    it('answers the app at / and any page path, with hashed assets cached and the API paths kept JSON', async () => {
      const index = await fetch(`${stack.edge.url}/`);
      expect(index.status).toBe(200);
      expect(index.headers.get('content-type')).toMatch(/^text\/html/);
      expect(index.headers.get('cache-control')).toBe('no-cache');
      expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(index.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await index.text();
      expect(html).toContain('Switchyard gateway');

      const page = await fetch(`${stack.edge.url}/channels?page=2`);
      expect(page.status).toBe(200);
      expect(await page.text()).toBe(html);

      const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect(script).toBeDefined();
      const asset = await fetch(`${stack.edge.url}${script}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');

      const missingAsset = await fetch(`${stack.edge.url}/assets/nothing-here.js`);
      expect(missingAsset.status).toBe(404);

      const unknownV1 = await fetch(`${stack.edge.url}/v1/no-such-endpoint`);
      expect(unknownV1.status).toBe(404);
      expect(unknownV1.headers.get('content-type')).toMatch(/json/);
      expect(((await unknownV1.json()) as { error: { message: string } }).error.message).toEqual(
        expect.any(String),
      );
      const unknownApi = await fetch(`${stack.edge.url}/api/no-such-endpoint`);
      expect(unknownApi.status).toBe(404);
      expect(((await unknownApi.json()) as { error: { code: string } }).error.code).toBe(
        'not_found',
      );
    });

    it('loads under 200 KB of JavaScript (gzip) on the first page', async () => {
      const html = await (await fetch(`${stack.edge.url}/`)).text();
      const scripts = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
      let total = 0;
      for (const script of new Set(scripts)) {
        const body = Buffer.from(await (await fetch(`${stack.edge.url}${script}`)).arrayBuffer());
        total += gzipSync(body, { level: 9 }).length;
      }
      console.log(`dashboard first load: ${(total / 1024).toFixed(1)} KB of JavaScript (gzip)`);
      expect(total).toBeGreaterThan(0);
      expect(total).toBeLessThan(FIRST_LOAD_BUDGET_BYTES);
    });
  });

  describe('an owner on first start', () => {
    it('signs in with the initial password and must change it first', async () => {
      await page.goto(stack.edge.url);
      await page.getByRole('heading', { name: 'Sign in to the gateway' }).waitFor();
      await checkPage(page, '01-sign-in');
      await signIn(page, owner.username, owner.password);
      await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
      await checkPage(page, '02-forced-password-change');
      await changePassword(page, owner.password, ownerPassword);
      await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    });

    it('creates a channel on mock-upstream with two keys, fetching its models, and tests it', async () => {
      await visit(page, 'Channels', 'Channels');
      await page.getByRole('button', { name: 'Add channel' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add channel' });
      await dialog.getByLabel('Name', { exact: true }).fill(channelName);
      await dialog.getByLabel('Kind').selectOption('aggregated');
      await dialog.getByLabel('Base URL').fill(stack.mock.url);
      await dialog.getByLabel('Keys (one per line)').fill(`${healthyKey}\n${bannedKey}`);
      await dialog.getByRole('button', { name: 'Fetch models from upstream' }).click();
      await dialog.getByText(/models fetched from the upstream/).waitFor();
      const models = dialog.getByLabel(/^Models/);
      expect(await models.inputValue()).toContain('gpt-4o-mini');
      await models.fill(`${await models.inputValue()}\n${unpricedModel}`);
      // The provider decides which setting the form asks for, and the API checks it.
      const provider = dialog.getByLabel('Provider');
      await provider.selectOption('azure');
      await dialog.getByLabel('Azure API version').fill('last week');
      await dialog.getByRole('button', { name: 'Create channel' }).click();
      await dialog
        .getByText(/apiVersion must be a date like 2024-10-21/)
        .first()
        .waitFor();
      await provider.selectOption('openai');
      expect(await dialog.getByLabel('Azure API version').count()).toBe(0);
      await checkPage(page, '03-channel-form');
      await dialog.getByRole('button', { name: 'Create channel' }).click();
      const row = page.getByRole('row', { name: new RegExp(channelName) });
      await row.waitFor();
      // Keys are shown by their last four characters only.
      const rowText = await row.innerText();
      expect(rowText).toContain(`…${healthyKey.slice(-4)}`);
      expect(rowText).toContain(`…${bannedKey.slice(-4)}`);
      expect(await page.content()).not.toContain(healthyKey);

      await row.getByRole('button', { name: `Test ${channelName}` }).click();
      await row.getByText(/OK/).waitFor();
      expect(await row.innerText()).toMatch(/OK\s+\d+ ms/);
      await checkPage(page, '04-channels');
    });

    it('creates a token, copies its value from the page, and calls /v1/chat/completions with it', async () => {
      await visit(page, 'Tokens', 'Tokens');
      await page.getByRole('button', { name: 'Create token' }).click();
      const form = page.getByRole('dialog', { name: 'Create token' });
      await form.getByLabel('Name', { exact: true }).fill(tokenName);
      await checkPage(page, '05-token-form');
      await form.getByRole('button', { name: 'Create token' }).click();
      const created = page.getByRole('dialog', { name: 'Token created' });
      await created.getByRole('button', { name: `Copy the value of ${tokenName}` }).click();
      await created.getByText('is on the clipboard').waitFor();
      tokenValue = await page.evaluate<string>('navigator.clipboard.readText()');
      expect(tokenValue).toMatch(/^sk-/);
      expect(await created.getByLabel(`Value of ${tokenName}`).innerText()).toBe(tokenValue);
      await created.getByText('How to call the gateway with it').click();
      expect(await created.innerText()).toContain(`${stack.edge.url}/v1`);
      await checkPage(page, '06-token-created');
      await created.getByRole('button', { name: 'Done' }).click();
      await page.getByRole('row', { name: new RegExp(tokenName) }).waitFor();

      await stack.routable(tokenValue, 'gpt-4o-mini');
      const reply = await stack.client(tokenValue).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hello from the dashboard test' }],
      });
      expect(reply.choices[0]?.message.content).toContain('hello from the dashboard test');
      await stack.client(tokenValue).chat.completions.create({
        model: unpricedModel,
        messages: [{ role: 'user', content: 'a model without a price' }],
      });
    });

    it('shows that request in Usage, with its detail, and counts it on the Overview', async () => {
      await visit(page, 'Usage', 'Usage');
      const row = page.getByRole('row', { name: new RegExp(`${tokenName}.*gpt-4o-mini`) }).first();
      await waitFor(
        async () => {
          if (await row.isVisible()) return true;
          await page.getByRole('button', { name: 'Filter' }).click();
          return undefined;
        },
        { what: 'the request in the usage log' },
      );
      expect(await row.innerText()).toContain('gpt-4o-mini');
      expect(await row.innerText()).toContain('200');
      await checkPage(page, '07-usage');
      await row.getByRole('button', { name: /Details/ }).click();
      const detail = page.getByRole('dialog', { name: 'Request detail' });
      expect(await detail.innerText()).toMatch(/Attempts\s+1/);
      expect(await detail.innerText()).toContain(channelName);
      await checkPage(page, '08-request-detail');
      await detail.getByRole('button', { name: 'Close' }).click();

      await visit(page, 'Overview', 'Overview');
      const requests = page.getByRole('definition').first();
      await waitFor(
        async () =>
          Number((await requests.innerText()).replace(/\D/g, '')) >= 1 ? true : undefined,
        { what: 'the request counted on the overview' },
      );
      await page.locator('figure.chart canvas').first().waitFor();
      expect(
        await page.getByRole('table', { name: 'Tokens by cost in the period' }).innerText(),
      ).toContain(tokenName);
      await page.getByRole('list', { name: `Keys of ${channelName}` }).waitFor();
      await checkPage(page, '09-overview');
    });

    it('puts the token in a team on Tokens, filters Usage and the Overview by team, and warns of budgets past their alert threshold', async () => {
      // Teams are made through the API: their own pages are test/dashboard/teams.spec.ts's.
      const api = async (method: string, path: string, body?: unknown, token?: string) => {
        const response = await fetch(`${stack.edge.url}${path}`, {
          method,
          headers: {
            'content-type': 'application/json',
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        expect(response.status).toBeLessThan(300);
        return (await response.json()) as Record<string, unknown>;
      };
      const session = (
        await api('POST', '/api/auth/login', { username: owner.username, password: ownerPassword })
      ).token as string;
      const paying = await api('POST', '/api/teams', { name: uniqueName('paying') }, session);
      const idle = await api('POST', '/api/teams', { name: uniqueName('idle') }, session);

      await visit(page, 'Tokens', 'Tokens');
      await page.getByRole('button', { name: `Edit ${tokenName}`, exact: true }).click();
      const form = page.getByRole('dialog', { name: `Edit ${tokenName}` });
      await form.getByLabel('Team that pays').selectOption({ label: paying.name as string });
      await checkPage(page, '09a-token-team');
      await form.getByRole('button', { name: 'Save token' }).click();
      await page.getByText(`${tokenName} saved.`).waitFor();
      const [token] = await query<{ teamId: number | null }>(
        stack.databaseUrl,
        `SELECT "teamId" FROM "Token" WHERE name = $1`,
        [tokenName],
      );
      expect(token?.teamId).toBe(paying.id);

      await stack.client(tokenValue).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'paid by a team' }],
      });
      await visit(page, 'Usage', 'Usage');
      const usageTeam = page.getByLabel('Team', { exact: true });
      await usageTeam.selectOption({ label: idle.name as string });
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.getByText('No requests match.').waitFor();
      await usageTeam.selectOption({ label: paying.name as string });
      const paid = page.getByRole('row', { name: new RegExp(`${tokenName}.*gpt-4o-mini`) });
      await waitFor(
        async () => {
          if ((await paid.count()) > 0) return true;
          await page.getByRole('button', { name: 'Filter' }).click();
          return undefined;
        },
        { what: 'the team-paid request in the usage log' },
      );
      // Only the request made since the token joined the team was paid by it.
      expect(await page.getByRole('table', { name: /Requests \(1\)/ }).count()).toBe(1);
      await checkPage(page, '09b-usage-by-team');

      // The team's budget past its 50% alert threshold, spent as metering would record it.
      await api(
        'PUT',
        '/api/budgets',
        { level: 'team', teamId: paying.id, amount: 10_000_000, period: 'none', softPercent: 50 },
        session,
      );
      await query(
        stack.databaseUrl,
        `INSERT INTO "BudgetSpend" (subject, "periodStart", spent, "updatedAt")
         VALUES ($1, '1970-01-01T00:00:00Z', 6000000, now())
         ON CONFLICT (subject, "periodStart") DO UPDATE SET spent = 6000000`,
        [`team:${paying.id as number}`],
      );
      await visit(page, 'Overview', 'Overview');
      const notice = page.getByRole('region', { name: 'Budgets needing attention' });
      await notice.waitFor();
      expect(await notice.innerText()).toContain(paying.name as string);
      expect(await notice.innerText()).toContain('Past 50%');

      const spenders = page.getByRole('table', { name: 'Tokens by cost in the period' });
      await page.getByLabel('Team', { exact: true }).selectOption({ label: idle.name as string });
      await spenders.getByText('No token has spent anything in this period.').waitFor();
      await page.getByLabel('Team', { exact: true }).selectOption({ label: paying.name as string });
      await spenders.getByRole('row', { name: new RegExp(tokenName) }).waitFor();
      await checkPage(page, '09c-overview-by-team');

      await notice.getByRole('link', { name: 'See every budget' }).click();
      await page.getByRole('heading', { level: 1, name: 'Budgets' }).waitFor();
      // The next test watches the Overview's channel health live.
      await visit(page, 'Overview', 'Overview');
    });

    it('shows a banned key as automatically disabled, with the reason, on Channels and live on the Overview', async () => {
      await stack.mockAccount(bannedKey, { banned: true });
      const client = stack.client(tokenValue);
      await waitFor(
        async () => {
          await client.chat.completions.create({
            model: 'gpt-4o-mini',
            messages: [{ role: 'user', content: 'find the banned key' }],
          });
          const [key] = await query<{ status: string }>(
            stack.databaseUrl,
            `SELECT status FROM "ChannelKey" WHERE "lastFour" = $1`,
            [bannedKey.slice(-4)],
          );
          return key?.status === 'auto_disabled' ? true : undefined;
        },
        { what: 'the banned key disabled by the router' },
      );
      // The overview polls: the change appears without a reload.
      const keys = page.getByRole('list', { name: `Keys of ${channelName}` });
      await keys.getByText('Automatically disabled').waitFor();
      expect(await keys.innerText()).toMatch(/banned by the upstream/);

      await visit(page, 'Channels', 'Channels');
      const row = page.getByRole('row', { name: new RegExp(channelName) });
      await row.getByText('Automatically disabled').waitFor();
      expect(await row.innerText()).toMatch(/banned by the upstream/);
      await checkPage(page, '10-channels-banned-key');
    });

    it('has Prices (unpriced models highlighted), Administrators, Audit log and Account pages', async () => {
      await visit(page, 'Prices', 'Prices');
      await page.getByText('Models used in the last 30 days without a price').waitFor();
      await page.getByRole('button', { name: `Add a price for ${unpricedModel}` }).click();
      await page.getByLabel(`Input price of ${unpricedModel}`).fill('0.15');
      await page.getByLabel(`Output price of ${unpricedModel}`).fill('0.6');
      await page.getByRole('button', { name: 'Save prices' }).click();
      await page.getByText('Prices saved.').waitFor();
      await waitFor(
        async () =>
          (await page.getByText('Models used in the last 30 days without a price').count()) === 0
            ? true
            : undefined,
        { what: `${unpricedModel} priced` },
      );
      await checkPage(page, '11-prices');

      await visit(page, 'Administrators', 'Administrators');
      await page.getByRole('button', { name: 'Add administrator' }).click();
      const form = page.getByRole('dialog', { name: 'Add administrator' });
      await form.getByLabel('Username').fill(viewer.username);
      await form.getByLabel('Initial password').fill('short');
      await form.getByLabel('Role').selectOption('viewer');
      await form.getByRole('button', { name: 'Add administrator' }).click();
      // The API's field error is shown beside its field.
      const password = form.getByLabel('Initial password');
      await waitFor(
        async () => ((await password.getAttribute('aria-invalid')) === 'true' ? true : undefined),
        { what: 'the password field marked invalid' },
      );
      await checkPage(page, '12-administrator-form-error');
      await password.fill(viewer.password);
      await form.getByRole('button', { name: 'Add administrator' }).click();
      await page.getByRole('row', { name: new RegExp(viewer.username) }).waitFor();
      await checkPage(page, '13-administrators');

      await visit(page, 'Audit log', 'Audit log');
      await page
        .getByRole('row', { name: /channel\./ })
        .first()
        .waitFor();
      await checkPage(page, '14-audit-log');

      await visit(page, 'Account', 'Account');
      await checkPage(page, '15-account');
    });

    it('works at 375 px wide on every page, with no column cut off, and in the dark theme', async () => {
      await page.setViewportSize({ width: 375, height: 800 });
      const pages: [string, string][] = [
        ['Overview', 'overview'],
        ['Channels', 'channels'],
        ['Tokens', 'tokens'],
        ['Usage', 'usage'],
        ['Prices', 'prices'],
        ['Administrators', 'administrators'],
        ['Audit log', 'audit-log'],
        ['Account', 'account'],
      ];
      for (const [link, name] of pages) {
        await visit(page, link, link);
        await checkPage(page, `16-375px-${name}`);
        // Neither the page nor any table in it is wider than the screen: nothing is out of
        // reach, and no column (a cost, an action) hides behind a scroll.
        const overflowing = await overflowingElements(page);
        expect({ page: link, overflowing }).toEqual({ page: link, overflowing: [] });
      }
      await page.getByLabel('Theme').selectOption('dark');
      await visit(page, 'Tokens', 'Tokens');
      await checkPage(page, '17-tokens-dark');
      await page.getByLabel('Theme').selectOption('system');
      await page.setViewportSize({ width: 1280, height: 900 });
    });

    it('logged no console error on any page', () => {
      expect(consoleErrors).toEqual([]);
    });
  });

  describe('a viewer', () => {
    let viewerPage: Page;

    beforeAll(async () => {
      ({ page: viewerPage } = await newPage());
      await signIn(viewerPage, viewer.username, viewer.password);
      await changePassword(
        viewerPage,
        viewer.password,
        `viewer-new-${randomBytes(6).toString('hex')}`,
      );
      await viewerPage.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    });

    it('sees channels and tokens but no control that changes them', async () => {
      await visit(viewerPage, 'Channels', 'Channels');
      await viewerPage.getByRole('row', { name: new RegExp(channelName) }).waitFor();
      expect(await viewerPage.getByRole('button', { name: 'Add channel' }).count()).toBe(0);
      expect(
        await viewerPage.getByRole('button', { name: /^(Edit|Delete|Disable|Test) / }).count(),
      ).toBe(0);
      await checkPage(viewerPage, '18-viewer-channels');

      await visit(viewerPage, 'Tokens', 'Tokens');
      await viewerPage.getByRole('row', { name: new RegExp(tokenName) }).waitFor();
      expect(await viewerPage.getByRole('button', { name: 'Create token' }).count()).toBe(0);
      expect(await viewerPage.getByRole('switch').count()).toBe(0);

      await visit(viewerPage, 'Prices', 'Prices');
      expect(await viewerPage.getByRole('button', { name: 'Save prices' }).count()).toBe(0);
      expect(await viewerPage.getByRole('spinbutton').count()).toBe(0);
      expect(
        await viewerPage
          .getByRole('navigation', { name: 'Main' })
          .getByRole('link', { name: 'Administrators' })
          .count(),
      ).toBe(0);
    });

    it('gets a 403 from the API as a message, not a blank page', async () => {
      await visit(viewerPage, 'Audit log', 'Audit log');
      const alert = viewerPage.getByRole('alert');
      await alert.waitFor();
      expect(await alert.innerText()).toMatch(/Your role does not allow this/);
      await checkPage(viewerPage, '19-viewer-forbidden');
    });
  });
});
