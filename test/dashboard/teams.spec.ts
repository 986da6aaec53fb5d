import { randomBytes } from 'node:crypto';
import { query, waitFor } from '@switchyard/testing';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  accessibilityViolations,
  CHROMIUM,
  newContext,
  screenshot,
  screenshotFolder,
} from '../support/browser.js';
import { Stack, STACK_START_TIMEOUT_MS, uniqueName } from '../support/stack.js';

// The teams pages of the gateway dashboard in a real browser (Debian's Chromium) against the
// real edge and admin: an administrator's Teams, Budgets and Redemption codes, and a
// member's own view (docs/teams.md). Every page is checked with axe-core and saved as a
// screenshot in test/output/teams.

const OUTPUT = screenshotFolder('teams');

describe('teams on the dashboard, in a browser', () => {
  const owner = { username: 'owner', password: `initial-${randomBytes(6).toString('hex')}` };
  const ownerPassword = `changed-${randomBytes(8).toString('hex')}`;
  const member = {
    username: uniqueName('member'),
    password: `member-${randomBytes(8).toString('hex')}`,
  };
  const stack = new Stack({ admin: owner });
  const teamName = uniqueName('research');
  let browser: Browser;
  let ownerToken = '';
  let teamId = 0;
  let redemptionCode = '';
  const consoleErrors: string[] = [];

  const apiCall = async (
    method: string,
    path: string,
    body?: unknown,
    token = ownerToken,
  ): Promise<Record<string, unknown>> => {
    const response = await fetch(`${stack.edge.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };

  const login = async (username: string, password: string) =>
    (await apiCall('POST', '/api/auth/login', { username, password }, '')).token as string;

  async function checkPage(target: Page, name: string): Promise<void> {
    await waitFor(
      async () => ((await target.locator('[aria-busy="true"]').count()) === 0 ? true : undefined),
      { what: `${name} loaded` },
    );
    await screenshot(target, OUTPUT, name);
    expect((await accessibilityViolations(target)).map((v) => `${name}: ${v}`)).toEqual([]);
  }

  async function visit(target: Page, link: string, heading: string): Promise<void> {
    await target
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: link, exact: true })
      .click();
    await target.getByRole('heading', { level: 1, name: heading }).waitFor();
  }

  async function signedIn(username: string, password: string, heading: string): Promise<Page> {
    const context = await newContext(browser, { viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4\d\d/.test(message.text()))
        consoleErrors.push(`${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => consoleErrors.push(`${page.url()}: ${error.message}`));
    await page.goto(stack.edge.url);
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
    return page;
  }

  beforeAll(async () => {
    await stack.start();
    // The owner's forced password change, and a member account, through the API.
    const initial = await login(owner.username, owner.password);
    await apiCall(
      'POST',
      '/api/auth/password',
      { currentPassword: owner.password, newPassword: ownerPassword },
      initial,
    );
    ownerToken = await login(owner.username, ownerPassword);
    const initialMember = `first-${randomBytes(6).toString('hex')}`;
    const account = await apiCall('POST', '/api/admins', {
      username: member.username,
      password: initialMember,
      role: 'member',
    });
    const memberSession = await login(member.username, initialMember);
    await apiCall(
      'POST',
      '/api/auth/password',
      { currentPassword: initialMember, newPassword: member.password },
      memberSession,
    );
    const team = await apiCall('POST', '/api/teams', {
      name: teamName,
      models: ['gpt-4o-mini', 'claude-*'],
      rateLimit: 60,
      maxTokenDays: 30,
      billing: 'balance',
    });
    teamId = team.id as number;
    await apiCall('POST', `/api/teams/${teamId}/members`, { userId: account.id });
    await apiCall('PUT', '/api/budgets', {
      level: 'team',
      teamId,
      amount: 50_000_000,
      period: 'month',
      softPercent: 80,
    });
    await apiCall('PUT', '/api/budgets', {
      level: 'member',
      teamId,
      userId: account.id,
      amount: 5_000_000,
      period: 'day',
    });
    // What metering would have settled this month, so the bars show something.
    const [start] = await query<{ start: Date }>(
      stack.databaseUrl,
      `SELECT date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS start`,
    );
    await query(
      stack.databaseUrl,
      `INSERT INTO "BudgetSpend" (subject, "periodStart", spent, "updatedAt") VALUES ($1, $2, 42000000, now())`,
      [`team:${teamId}`, start!.start],
    );
    await apiCall('POST', `/api/teams/${teamId}/balance/credits`, {
      amount: 20_000_000,
      reason: 'opening balance',
    });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
  }, STACK_START_TIMEOUT_MS);

  afterAll(async () => {
    await browser?.close();
    await stack.stop();
  });

  describe('an administrator', () => {
    let page: Page;

    beforeAll(async () => {
      page = await signedIn(owner.username, ownerPassword, 'Overview');
    });

    it('sees teams, opens one with its budgets as bars, and creates another', async () => {
      await visit(page, 'Teams', 'Teams');
      const row = page.getByRole('row', { name: new RegExp(teamName) });
      await row.waitFor();
      await row.getByRole('button', { name: `Open ${teamName}` }).click();
      const detail = page.getByRole('region', { name: teamName });
      await detail.getByRole('progressbar', { name: `Budget of ${teamName}: 84% spent` }).waitFor();
      await detail
        .getByText(/Resets /)
        .first()
        .waitFor();
      await detail.getByText('Past 80%').waitFor();
      await detail.getByRole('heading', { name: 'Balance: $20.00' }).waitFor();
      await checkPage(page, '01-admin-teams');

      await page.getByRole('button', { name: 'Create team' }).click();
      const dialog = page.getByRole('dialog', { name: 'Create team' });
      const second = uniqueName('design');
      await dialog.getByLabel('Name').fill(second);
      await dialog.getByLabel(/^Models its tokens may use/).fill('*');
      await dialog.getByRole('button', { name: 'Create team' }).click();
      // The API's word on the bad pattern, next to the field.
      await dialog.locator('.field-error', { hasText: /models must be/ }).waitFor();
      await checkPage(page, '02-admin-team-form-error');
      await dialog.getByLabel(/^Models its tokens may use/).fill('gpt-4o');
      await dialog.getByRole('button', { name: 'Create team' }).click();
      await page.getByRole('row', { name: new RegExp(second) }).waitFor();
    });

    it('sees every budget, closest to its cap first', async () => {
      await visit(page, 'Budgets', 'Budgets');
      const rows = page.getByRole('row');
      await page.getByRole('progressbar', { name: /84% spent/ }).waitFor();
      // The header, then the team at 84% before the member at 0%.
      expect(await rows.nth(1).innerText()).toContain(teamName);
      await checkPage(page, '03-admin-budgets');
    });

    it('generates redemption codes, downloads their CSV once, and sees them unused', async () => {
      await visit(page, 'Redemption codes', 'Redemption codes');
      await page.getByRole('button', { name: 'Generate codes' }).click();
      const form = page.getByRole('dialog', { name: 'Generate redemption codes' });
      await form.getByLabel('Each code worth (US dollars)').fill('2.5');
      await form.getByLabel('How many (at most 1000)').fill('3');
      await form.getByLabel('Note').fill('browser test');
      await form.getByRole('button', { name: 'Generate' }).click();
      const shown = page.getByRole('dialog', { name: /^Batch #\d+: 3 codes$/ });
      await shown.waitFor();
      const codes = (await shown.getByLabel('The codes').innerText()).trim().split('\n');
      expect(codes).toHaveLength(3);
      redemptionCode = codes[0]!;
      const download = page.waitForEvent('download');
      await shown.getByRole('button', { name: 'Download CSV' }).click();
      const file = await download;
      expect(file.suggestedFilename()).toMatch(/^redemption-codes-batch-\d+\.csv$/);
      // Once: the button is spent.
      expect(await shown.getByRole('button', { name: 'CSV downloaded' }).isDisabled()).toBe(true);
      await checkPage(page, '04-admin-codes-shown-once');
      await shown.getByRole('button', { name: 'Done' }).click();
      await page.getByText('0 used, 3 unused of 3').waitFor();
      await checkPage(page, '05-admin-redemption-batches');
    });
  });

  describe('a member', () => {
    let page: Page;

    beforeAll(async () => {
      page = await signedIn(member.username, member.password, 'My teams');
    });

    it('sees only their own view: their teams, budgets and balance', async () => {
      const links = await page
        .getByRole('navigation', { name: 'Main' })
        .getByRole('link')
        .allInnerTexts();
      expect(links).toEqual(['My teams', 'Account']);
      const team = page.getByRole('region', { name: teamName });
      await team.getByRole('progressbar', { name: new RegExp(`Budget of ${teamName}`) }).waitFor();
      await team
        .getByRole('progressbar', { name: new RegExp(`Budget of ${member.username} in`) })
        .waitFor();
      await checkPage(page, '06-member-my-teams');
    });

    it("makes a token within the team's policy, told which field goes beyond it", async () => {
      const team = page.getByRole('region', { name: teamName });
      await team.getByRole('button', { name: `Create token for ${teamName}` }).click();
      const dialog = page.getByRole('dialog', { name: `Create a token for ${teamName}` });
      await dialog.getByLabel('Name').fill('laptop');
      await dialog.getByLabel(/^Models/).fill('gpt-4o');
      await dialog.getByRole('button', { name: 'Create token' }).click();
      await dialog
        .getByText(/go beyond what team/)
        .first()
        .waitFor();
      await checkPage(page, '07-member-token-beyond-policy');
      await dialog.getByLabel(/^Models/).fill('claude-3-haiku');
      await dialog.getByRole('button', { name: 'Create token' }).click();
      const created = page.getByRole('dialog', { name: 'Token created' });
      await created.getByLabel('Value of laptop').waitFor();
      await created.getByRole('button', { name: 'Done' }).click();
      await team.getByRole('row', { name: /laptop/ }).waitFor();
    });

    it('redeems a code for the team and sees the balance grow', async () => {
      const team = page.getByRole('region', { name: teamName });
      await team.getByLabel('Redemption code').fill(redemptionCode);
      await team.getByRole('button', { name: 'Redeem' }).click();
      await team.getByRole('heading', { name: 'Balance: $22.50' }).waitFor();
      // Again: the code is used.
      await team.getByLabel('Redemption code').fill(redemptionCode);
      await team.getByRole('button', { name: 'Redeem' }).click();
      await team.getByRole('alert').waitFor();
      await checkPage(page, '08-member-redeemed');
      expect(consoleErrors).toEqual([]);
    });
  });
});
