import { randomBytes } from 'node:crypto';
import { waitFor } from '@switchyard/testing';
import { type Browser, type Page } from 'playwright-core';
import { overflowingElements } from '../support/layout.js';
import {
  accessibilityViolations,
  newPage,
  screenshot,
  screenshotFolder,
} from '../support/browser.js';
import {
  connectChromium,
  UPSTREAM_KEYS,
  webStackForSuite,
  type WebStack,
} from '../support/web-stack.js';

// Chat credits in a real browser (docs/credits.md): the balance in the header, a message
// refused for too few credits, a code redeemed on the Credits page and the spend per model
// there, the administrator's Codes, Plans, Users and Settings pages, and all of them at a
// phone's width.

const SCREENSHOTS = screenshotFolder('web-credits');

describe('credits in the chat web app', () => {
  let stack: WebStack;
  let browser: Browser;
  let page: Page;
  const user = {
    username: `payer${randomBytes(3).toString('hex')}`,
    password: 'a long enough password',
  };

  async function asAdmin(method: string, route: string, body?: unknown): Promise<unknown> {
    const login = await fetch(`${stack.chat.url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(stack.admin),
    });
    const { token } = (await login.json()) as { token: string };
    const response = await fetch(`${stack.chat.url}${route}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) {
      throw new Error(`${method} ${route}: ${response.status} ${await response.text()}`);
    }
    return response.json();
  }

  const headerBalance = () => page.getByRole('link', { name: /credits$/ });

  beforeAll(async () => {
    stack = await webStackForSuite();
    await asAdmin('POST', '/api/admin/api-keys', {
      platform: 'openai',
      address: stack.mock.url,
      key: UPSTREAM_KEYS.chatApp,
      purpose: 'chat',
      enabled: true,
    });
    await asAdmin('POST', '/api/admin/models', { name: 'free-model', open: true });
    await asAdmin('POST', '/api/admin/models', {
      name: 'priced-model',
      open: true,
      creditsPerCall: 150,
    });
    browser = await connectChromium(stack);
    page = await newPage(browser);
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('shows the balance and each model’s price, and refuses a message it cannot pay for', async () => {
    await page.goto(`${stack.web.url}/register`);
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Create account' }).click();

    await headerBalance().waitFor();
    expect(await headerBalance().textContent()).toBe('100 credits');
    const picker = page.getByLabel('Model');
    await picker.locator('option', { hasText: 'priced-model' }).waitFor({ state: 'attached' });
    const options = await picker.locator('option').allTextContents();
    expect(options).toEqual(
      expect.arrayContaining(['free-model — free', 'priced-model — 150 credits a call']),
    );

    await picker.selectOption('priced-model');
    const composer = page.getByRole('textbox', { name: 'Message' });
    await composer.fill('an expensive question');
    await page.getByRole('button', { name: 'Send' }).click();
    const notice = page.locator('.composer [role="alert"]');
    await notice.waitFor();
    expect(await notice.textContent()).toContain('You do not have enough credits');
    expect(await notice.locator('.credit-shortfall').textContent()).toMatch(
      /Your balance: 100 credits\. This message may\s+cost up to 150 credits/,
    );
    // One call to redeem, as a link (the hint is not said beside it again).
    expect((await notice.textContent())!.match(/redeem a code/gi)).toHaveLength(1);
    // The question was not sent: it is back in the composer, and not in the conversation.
    expect(await composer.inputValue()).toBe('an expensive question');
    await screenshot(page, SCREENSHOTS, 'insufficient-credits');
    expect(await accessibilityViolations(page)).toEqual([]);

    await notice.getByRole('link', { name: 'Redeem a code' }).click();
    await page.getByRole('heading', { name: 'Credits', level: 1 }).waitFor();
  });

  it('redeems a code on the Credits page, and the header follows', async () => {
    const made = (await asAdmin('POST', '/api/admin/credit-codes', {
      credits: 200,
      count: 1,
      note: 'browser',
    })) as { codes: string[] };
    await page.getByRole('textbox', { name: 'Code' }).fill('SY-WRONG-CODE-0000');
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByText('This code does not work.').waitFor();

    await page.getByRole('textbox', { name: 'Code' }).fill(made.codes[0]!);
    await page.getByRole('button', { name: 'Redeem' }).click();
    await waitFor(
      async () => ((await headerBalance().textContent()) === '300 credits' ? true : undefined),
      { what: 'the header showing the redeemed credits' },
    );
    await page.getByText('Your balance: 300 credits').waitFor();
    const history = page.getByRole('table', { name: /Your credit history/ });
    await history.getByRole('cell', { name: '+200' }).waitFor();
    await page.getByLabel('Show').selectOption('grant');
    await waitFor(
      async () =>
        (await history.getByRole('cell', { name: '+200' }).count()) === 0 ? true : undefined,
      { what: 'the ledger filtered to grants' },
    );
    await history.getByRole('cell', { name: 'registration' }).waitFor();
    await screenshot(page, SCREENSHOTS, 'credits-page');
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  it('charges a reply and shows the new balance in the header', async () => {
    await page.getByRole('link', { name: 'Chat' }).click();
    const picker = page.getByLabel('Model');
    await picker.locator('option', { hasText: 'priced-model' }).waitFor({ state: 'attached' });
    await picker.selectOption('priced-model');
    await page.getByRole('textbox', { name: 'Message' }).fill('worth it');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText('Echo: worth it').waitFor();
    await waitFor(
      async () => ((await headerBalance().textContent()) === '150 credits' ? true : undefined),
      { what: 'the header showing the charged balance' },
    );
  });

  it('charts the credits granted and spent per day on the admin overview, and spend per model', async () => {
    const adminPage = await adminPageOf();
    await adminPage.goto(`${stack.web.url}/admin`);
    await adminPage.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    // The chart sums itself up for a screen reader; its numbers are in the table below it.
    await adminPage
      .getByRole('img', { name: /^Credits granted and spent per day over the last 7 days: / })
      .waitFor();
    const models = adminPage.getByRole('table', { name: 'Credits spent per model, last 7 days' });
    const priced = models.getByRole('row').filter({ hasText: 'priced-model' });
    await priced.waitFor();
    expect(await priced.innerText()).toMatch(/150\s+100%/);
    const perDay = adminPage.getByRole('table', {
      name: 'Credits granted and spent per day, last 7 days',
    });
    const today = perDay
      .getByRole('row')
      .filter({ hasText: new Date().toISOString().slice(0, 10) });
    await today.waitFor();
    // The user's registration grant (100) at least; the reply's 150 spent.
    const cells = await today.getByRole('cell').allInnerTexts();
    expect(Number(cells[1]!.replace(/,/g, ''))).toBeGreaterThanOrEqual(100);
    expect(cells.at(-1)).toBe('150');
    await screenshot(adminPage, SCREENSHOTS, 'admin-overview-credits');
    expect(await accessibilityViolations(adminPage)).toEqual([]);
    await adminPage.close();
  });

  it('lets an administrator make codes, see them once, and adjust a user with a reason', async () => {
    const adminPage = await newPage(browser);
    await adminPage.goto(`${stack.web.url}/login`);
    await adminPage.getByLabel('Username').fill(stack.admin.username);
    await adminPage.getByLabel('Password').fill(stack.admin.password);
    await adminPage.getByRole('button', { name: 'Sign in' }).click();
    await adminPage.getByRole('link', { name: /credits$/ }).waitFor();

    await adminPage.goto(`${stack.web.url}/admin/codes`);
    await adminPage.getByRole('button', { name: 'Make codes' }).click();
    await adminPage.getByLabel('Credits per code').fill('25');
    await adminPage.getByLabel('How many codes').fill('3');
    await adminPage.getByLabel('Note').fill('meetup');
    await adminPage.locator('form').getByRole('button', { name: 'Make codes' }).click();
    const codes = adminPage.getByLabel('Codes', { exact: true });
    await codes.waitFor();
    expect((await codes.inputValue()).split('\n')).toHaveLength(3);
    await adminPage.getByRole('cell', { name: 'meetup' }).waitFor();
    await screenshot(adminPage, SCREENSHOTS, 'admin-codes');
    expect(await accessibilityViolations(adminPage)).toEqual([]);

    await adminPage.goto(`${stack.web.url}/admin/users`);
    await adminPage.getByRole('button', { name: `Credits of ${user.username}` }).click();
    await adminPage.getByLabel('Credits to add (negative to take away)').fill('-500');
    await adminPage.getByLabel('Reason').fill('refund of a double charge');
    await adminPage.getByRole('button', { name: 'Adjust' }).click();
    await adminPage.getByText('That would take the balance below zero.').waitFor();
    await adminPage.getByLabel('Credits to add (negative to take away)').fill('50');
    await adminPage.getByRole('button', { name: 'Adjust' }).click();
    const history = adminPage.getByRole('table', {
      name: new RegExp(`history of ${user.username}`),
    });
    await history.getByRole('cell', { name: 'refund of a double charge' }).waitFor();
    await history.getByRole('cell', { name: '+50' }).waitFor();
    expect(
      await adminPage
        .getByRole('row', { name: new RegExp(user.username) })
        .first()
        .textContent(),
    ).toContain('200');
    await screenshot(adminPage, SCREENSHOTS, 'admin-user-credits');
    expect(await accessibilityViolations(adminPage)).toEqual([]);

    await adminPage.goto(`${stack.web.url}/admin/models`);
    await adminPage.getByRole('cell', { name: '150 credits a call' }).waitFor();
    await adminPage.getByRole('button', { name: 'Edit priced-model' }).click();
    // Out of range for the API, not for the browser's own checks: the API names the field.
    await adminPage.getByLabel('Per call').fill('2000000');
    await adminPage.getByRole('button', { name: 'Save' }).click();
    await adminPage.getByText('creditsPerCall must be at most 1000000').first().waitFor();
    await screenshot(adminPage, SCREENSHOTS, 'admin-model-price');
    expect(await accessibilityViolations(adminPage)).toEqual([]);
  });
  it('lets an administrator make, edit and disable a plan, put a user on it, and give it by code', async () => {
    await asAdmin('POST', '/api/admin/models', { name: 'plan-model', open: false });
    const adminPage = await adminPageOf();
    await adminPage.goto(`${stack.web.url}/admin/plans`);
    await adminPage.getByRole('heading', { level: 1, name: 'Plans' }).waitFor();
    await adminPage.getByRole('button', { name: 'New plan' }).click();
    const form = adminPage.getByRole('form', { name: 'New plan' });
    await form.getByLabel('Name').fill('Gold');
    await form.getByLabel('Credits each period').fill('300');
    await form.getByLabel('Period', { exact: true }).selectOption('month');
    await form.getByRole('checkbox', { name: /plan-model/ }).check();
    await screenshot(adminPage, SCREENSHOTS, 'admin-plan-form');
    expect(await accessibilityViolations(adminPage)).toEqual([]);
    await form.getByRole('button', { name: 'Save plan' }).click();
    const plans = adminPage.getByRole('table', { name: /^Plans/ });
    const gold = plans.getByRole('row').filter({ hasText: 'Gold' });
    await gold.waitFor();
    expect(await gold.innerText()).toMatch(/300 a month\s+plan-model\s+0/);

    await adminPage.getByRole('button', { name: 'Edit Gold' }).click();
    const edit = adminPage.getByRole('form', { name: 'Edit plan Gold' });
    await edit.getByLabel('Credits each period').fill('400');
    await edit.getByRole('button', { name: 'Save plan' }).click();
    await plans.getByRole('cell', { name: '400 a month' }).waitFor();

    // Put the user on it from Users: 400 credits at once, and the included model.
    await adminPage.goto(`${stack.web.url}/admin/users`);
    await adminPage.getByRole('button', { name: `Plan of ${user.username}` }).click();
    const assign = adminPage.getByRole('form', { name: `Plan of ${user.username}` });
    await assign.getByText('No plan.').waitFor();
    await assign
      .getByLabel('Plan', { exact: true })
      .selectOption({ label: 'Gold: 400 credits a month' });
    await assign.getByRole('button', { name: 'Save plan' }).click();
    await adminPage.getByText(`${user.username} is on the plan Gold`).waitFor();
    // The list says who is on which plan.
    const listed = adminPage.getByRole('table', { name: /^Users/ }).getByRole('row');
    await listed.filter({ hasText: user.username }).getByRole('cell', { name: 'Gold' }).waitFor();
    await adminPage.getByRole('button', { name: `Plan of ${user.username}` }).click();
    await assign.getByText(/^On Gold; next top-up/).waitFor();
    await screenshot(adminPage, SCREENSHOTS, 'admin-user-plan');
    expect(await accessibilityViolations(adminPage)).toEqual([]);

    await page.goto(`${stack.web.url}/`);
    const picker = page.getByLabel('Model');
    await picker.locator('option', { hasText: 'plan-model' }).waitFor({ state: 'attached' });
    await page.goto(`${stack.web.url}/credits`);
    const history = page.getByRole('table', { name: /Your credit history/ });
    await history.getByRole('cell', { name: /^plan Gold for \d{4}-\d{2}$/ }).waitFor();

    // Codes that give the plan.
    await adminPage.goto(`${stack.web.url}/admin/codes`);
    await adminPage.getByRole('button', { name: 'Make codes' }).click();
    await adminPage
      .getByLabel('Each code gives')
      .selectOption({ label: 'Plan Gold (400 credits a month)' });
    expect(await adminPage.getByLabel('Credits per code').count()).toBe(0);
    await adminPage.getByLabel('How many codes').fill('2');
    await adminPage.locator('form').getByRole('button', { name: 'Make codes' }).click();
    await adminPage.getByRole('heading', { name: /2 codes of the plan Gold/ }).waitFor();
    await adminPage.getByRole('cell', { name: 'plan Gold' }).waitFor();
    await screenshot(adminPage, SCREENSHOTS, 'admin-plan-codes');
    expect(await accessibilityViolations(adminPage)).toEqual([]);

    // Disabled: no longer offered for codes; the switch says so.
    await adminPage.goto(`${stack.web.url}/admin/plans`);
    // A click, not check(): the switch shows the stored state, so it turns once the server answers.
    await adminPage.getByRole('switch', { name: 'Disable Gold' }).click();
    await adminPage.getByText('Plan Gold disabled.').waitFor();
    await gold.getByText('Disabled').waitFor();
    expect(await gold.innerText()).toMatch(/400 a month\s+plan-model\s+1/);
    await screenshot(adminPage, SCREENSHOTS, 'admin-plans');
    expect(await accessibilityViolations(adminPage)).toEqual([]);
    await asAdmin('POST', '/api/admin/credit-plans', {
      name: 'Silver',
      credits: 50,
      period: 'day',
    });
    await adminPage.goto(`${stack.web.url}/admin/codes`);
    await adminPage.getByRole('button', { name: 'Make codes' }).click();
    const gives = adminPage.getByLabel('Each code gives');
    await gives.locator('option', { hasText: 'Silver' }).waitFor({ state: 'attached' });
    expect(await gives.locator('option').allTextContents()).toEqual([
      'Credits',
      'Plan Silver (50 credits a day)',
    ]);
    await adminPage.close();
  });

  it('charts the user’s own credits spent per model on the Credits page', async () => {
    await page.goto(`${stack.web.url}/credits`);
    const spend = page.getByRole('table', {
      name: 'Your credits spent per model, last 30 days',
    });
    const priced = spend.getByRole('row').filter({ hasText: 'priced-model' });
    await priced.waitFor();
    expect(await priced.innerText()).toMatch(/150\s+100%/);
    await page.getByRole('radio', { name: 'Last 7 days' }).check();
    await page
      .getByRole('table', { name: 'Your credits spent per model, last 7 days' })
      .getByRole('row')
      .filter({ hasText: 'priced-model' })
      .waitFor();
    await settled(page, 'the Credits page loaded');
    await page.getByRole('heading', { name: 'Spent per model' }).scrollIntoViewIfNeeded();
    await screenshot(page, SCREENSHOTS, 'credits-spend-per-model');
    expect(await accessibilityViolations(page)).toEqual([]);
  });

  /** Signs an administrator in, in a page of its own. */
  async function adminPageOf(width?: number): Promise<Page> {
    const adminPage = await newPage(
      browser,
      width === undefined ? {} : { viewport: { width, height: 800 } },
    );
    await adminPage.goto(`${stack.web.url}/login`);
    await adminPage.getByLabel('Username').fill(stack.admin.username);
    await adminPage.getByLabel('Password').fill(stack.admin.password);
    await adminPage.getByRole('button', { name: 'Sign in' }).click();
    await adminPage.getByRole('link', { name: /credits$/ }).waitFor();
    return adminPage;
  }

  const settled = (target: Page, what: string) =>
    waitFor(
      async () => ((await target.locator('[aria-busy="true"]').count()) === 0 ? true : undefined),
      { what },
    );

  it('lets an administrator set the registration grant and the A2A decision model', async () => {
    await asAdmin('POST', '/api/admin/models', { name: 'decision-model', open: true });
    const adminPage = await adminPageOf();
    await adminPage.goto(`${stack.web.url}/admin/settings`);
    await adminPage.getByRole('heading', { level: 1, name: 'Chat settings' }).waitFor();
    const grant = adminPage.getByLabel('Registration grant');
    await waitFor(async () => ((await grant.inputValue()) === '100' ? true : undefined), {
      what: 'the saved grant shown',
    });
    const decider = adminPage.getByLabel('Decision model');
    await decider.locator('option', { hasText: 'decision-model' }).waitFor({ state: 'attached' });
    // Drawing and music models cannot answer tasks: only chat models are offered.
    expect(await decider.locator('option').allTextContents()).toEqual(
      expect.arrayContaining(['None: take no A2A tasks', 'decision-model', 'free-model']),
    );

    // Out of range for the API, not for the browser's own checks: the API names the field.
    await grant.fill('2000000');
    await adminPage.getByRole('button', { name: 'Save settings' }).click();
    await adminPage.getByText('registrationGrant must be at most 1000000').first().waitFor();
    await screenshot(adminPage, SCREENSHOTS, 'admin-settings-error');
    expect(await accessibilityViolations(adminPage)).toEqual([]);

    await grant.fill('40');
    await decider.selectOption('decision-model');
    await adminPage.getByRole('button', { name: 'Save settings' }).click();
    await adminPage.getByText('Settings saved.').waitFor();
    expect(await asAdmin('GET', '/api/admin/chat-settings')).toMatchObject({
      registrationGrant: 40,
      a2aModel: 'decision-model',
    });
    await screenshot(adminPage, SCREENSHOTS, 'admin-settings');
    expect(await accessibilityViolations(adminPage)).toEqual([]);
    await asAdmin('PUT', '/api/admin/chat-settings', { registrationGrant: 100, a2aModel: null });
  });

  it('shows every credits page 375 px wide with nothing out of reach', async () => {
    const phone = await newPage(browser, { viewport: { width: 375, height: 800 } });
    await phone.goto(`${stack.web.url}/login`);
    await phone.getByLabel('Username').fill(user.username);
    await phone.getByLabel('Password').fill(user.password);
    await phone.getByRole('button', { name: 'Sign in' }).click();
    await phone.getByRole('link', { name: /credits$/ }).waitFor();
    // The composer's insufficient-credits notice: the balance taken below the model's price.
    const users = (await asAdmin('GET', '/api/admin/users?pageSize=100')) as {
      items: { id: number; username: string; credits: number }[];
    };
    const row = users.items.find((candidate) => candidate.username === user.username)!;
    // Whatever earlier cases left (a plan's top-up, a code), one credit short of the price.
    const left = Math.min(row.credits, 149);
    if (left !== row.credits) {
      await asAdmin('POST', `/api/admin/users/${row.id}/credits`, {
        amount: left - row.credits,
        reason: 'narrow screen test',
      });
    }
    const picker = phone.getByLabel('Model');
    await picker.locator('option', { hasText: 'priced-model' }).waitFor({ state: 'attached' });
    await picker.selectOption('priced-model');
    await phone.getByRole('textbox', { name: 'Message' }).fill('too dear');
    await phone.getByRole('button', { name: 'Send' }).click();
    await phone.locator('.composer [role="alert"]').waitFor();
    // The header reads the balance again after a refusal too.
    await waitFor(
      async () =>
        (await phone.getByRole('link', { name: /credits$/ }).textContent()) === `${left} credits`
          ? true
          : undefined,
      { what: 'the header showing the balance the refusal was about' },
    );
    const check = async (name: string, target: Page) => {
      await settled(target, `${name} loaded`);
      let overflowing: string[] = [];
      await waitFor(async () => (overflowing = await overflowingElements(target)).length === 0, {
        what: () => `${name}: nothing wider than 375 px (still: ${JSON.stringify(overflowing)})`,
      });
      await screenshot(target, SCREENSHOTS, `${name}-375px`);
      expect(await accessibilityViolations(target)).toEqual([]);
    };
    await check('insufficient-credits', phone);
    await phone.goto(`${stack.web.url}/credits`);
    await phone.getByRole('heading', { name: 'Credits', level: 1 }).waitFor();
    await check('credits-page', phone);

    const adminPage = await adminPageOf(375);
    for (const [route, heading, name] of [
      ['/admin/codes', 'Redemption codes', 'admin-codes'],
      ['/admin/plans', 'Plans', 'admin-plans'],
      ['/admin/users', 'Users', 'admin-users'],
      ['/admin/settings', 'Chat settings', 'admin-settings'],
    ] as const) {
      await adminPage.goto(`${stack.web.url}${route}`);
      await adminPage.getByRole('heading', { level: 1, name: heading }).waitFor();
      await check(name, adminPage);
    }
    await adminPage.goto(`${stack.web.url}/admin/codes`);
    await adminPage.getByRole('button', { name: 'Make codes' }).click();
    await adminPage.getByLabel('Expires').waitFor();
    await check('admin-codes-form', adminPage);
    await adminPage.goto(`${stack.web.url}/admin/users`);
    await adminPage.getByRole('button', { name: `Credits of ${user.username}` }).click();
    await adminPage
      .getByRole('table', { name: new RegExp(`history of ${user.username}`) })
      .waitFor();
    await check('admin-user-credits', adminPage);
  });
  it('shares an invite link; the invitee registers through it and both are rewarded', async () => {
    await page.goto(`${stack.web.url}/credits`);
    const field = page.getByLabel('Your invite link');
    await field.waitFor();
    const link = await field.inputValue();
    expect(link).toMatch(new RegExp(`^${stack.web.url}/register\\?invite=[0-9A-Z]{10}$`));
    await page.getByText('you both get 50 credits').waitFor();
    await screenshot(page, SCREENSHOTS, 'credits-invite');
    expect(await accessibilityViolations(page)).toEqual([]);
    const before = Number((await headerBalance().textContent())!.replace(/\D/g, ''));

    const invitee = await newPage(browser);
    await invitee.goto(link);
    await invitee.getByText('You were invited').waitFor();
    await invitee.getByLabel('Username').fill(`guest${randomBytes(3).toString('hex')}`);
    await invitee.getByLabel('Password').fill('another long password');
    await invitee.getByRole('button', { name: 'Create account' }).click();
    await invitee.getByRole('link', { name: /credits$/ }).waitFor();
    const picker = invitee.getByLabel('Model');
    await picker.locator('option', { hasText: 'free-model' }).waitFor({ state: 'attached' });
    await picker.selectOption('free-model');
    await invitee.getByRole('textbox', { name: 'Message' }).fill('hello from a guest');
    await invitee.getByRole('button', { name: 'Send' }).click();
    await invitee.getByText('Echo: hello from a guest').waitFor();
    await waitFor(
      async () =>
        (await invitee.getByRole('link', { name: /credits$/ }).textContent()) === '150 credits'
          ? true
          : undefined,
      { what: "the invitee's reward in the header" },
    );
    await page.reload();
    await waitFor(
      async () =>
        (await headerBalance().textContent()) === `${before + 50} credits` ? true : undefined,
      { what: "the inviter's reward in the header" },
    );
  });
});
