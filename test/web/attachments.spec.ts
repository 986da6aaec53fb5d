import { randomBytes } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import { waitFor } from '@switchyard/testing';
import { type Browser, type Page } from 'playwright-core';
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

// Images in the chat web app, in a real browser against the real web server, chat backend
// and mock provider: attached with the file picker and pasted, sent to a model that reads
// images, kept in the history, private to their owner, refused clearly when they cannot be
// taken (docs/specification.md, "Images").

const UPSTREAM_KEY = UPSTREAM_KEYS.images;
const SCREENSHOTS = screenshotFolder('attachments');

/** A real PNG of one colour, so the browser can draw it. */
function solidPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, truecolour, no interlace
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3).map((_, i) => rgb[i % 3]!)]);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(pixels)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const dataUrl = (png: Buffer) => `data:image/png;base64,${png.toString('base64')}`;

describe('images in the chat web app', () => {
  let mock: WebStack['mock'];
  let web: WebStack['web'];
  let admin: WebStack['admin'];
  let browser: Browser;
  let page: Page;
  const user = {
    username: `viewer${randomBytes(3).toString('hex')}`,
    password: 'a long enough password',
  };
  const chosen = solidPng(96, 64, [200, 40, 40]);
  const pasted = solidPng(64, 96, [30, 90, 200]);

  async function api(
    method: string,
    route: string,
    token: string | null,
    body?: unknown,
  ): Promise<Response> {
    return fetch(`${web.url}${route}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  async function login(credentials: { username: string; password: string }): Promise<string> {
    const response = await api('POST', '/api/auth/login', null, credentials);
    return ((await response.json()) as { token: string }).token;
  }

  async function asAdmin(route: string, body: unknown): Promise<void> {
    const response = await api('POST', route, await login(admin), body);
    if (!response.ok) throw new Error(`${route}: ${response.status} ${await response.text()}`);
  }

  /** The last chat completion the mock provider received. */
  async function lastUpstreamQuestion(): Promise<unknown> {
    const response = await fetch(`${mock.url}/_mock/accounts/${UPSTREAM_KEY}/requests`);
    const log = (await response.json()) as { body: { messages: { content: unknown }[] } }[];
    return log.at(-1)?.body.messages.at(-1)?.content;
  }

  /** Dispatches a paste of `png` into the composer, as a browser does for a copied image. */
  async function paste(png: Buffer, name: string): Promise<void> {
    await page.evaluate(`(() => {
      const bytes = Uint8Array.from(atob('${png.toString('base64')}'), (c) => c.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], '${name}', { type: 'image/png' }));
      document.querySelector('#composer').dispatchEvent(
        new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }),
      );
    })()`);
  }

  const composerError = () => page.locator('.composer [role="alert"]');

  beforeAll(async () => {
    const stack = await webStackForSuite();
    ({ mock, web, admin } = stack);
    await asAdmin('/api/admin/api-keys', {
      address: mock.url,
      key: UPSTREAM_KEY,
      purpose: 'chat',
    });
    await asAdmin('/api/admin/models', { name: 'eyes-model', open: true, vision: true });
    await asAdmin('/api/admin/models', { name: 'words-model', open: true });
    browser = await connectChromium(stack);
    page = await newPage(browser);
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('attaches one image with the picker and pastes another, and the model receives both', async () => {
    await page.goto(`${web.url}/register`);
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    const picker = page.getByLabel('Model');
    await picker.locator('option', { hasText: 'words-model' }).waitFor({ state: 'attached' });

    // A model that reads no images: nothing can be attached.
    await picker.selectOption('words-model');
    const attach = page.getByRole('button', { name: 'Attach images' });
    expect(await attach.isDisabled()).toBe(true);
    expect(await attach.getAttribute('title')).toContain('words-model does not read images');

    await picker.selectOption('eyes-model');
    expect(await attach.isEnabled()).toBe(true);
    await page
      .locator('#attach-images')
      .setInputFiles({ name: 'red.png', mimeType: 'image/png', buffer: chosen });
    await paste(pasted, 'pasted.png');

    const previews = page.getByRole('list', { name: 'Images to send' });
    await previews.getByRole('img', { name: 'Image 1 to send: red.png' }).waitFor();
    await previews.getByRole('img', { name: 'Image 2 to send: pasted.png' }).waitFor();
    // Both uploaded (their size replaces "Uploading…").
    await waitFor(
      async () => ((await previews.innerText()).includes('Uploading') ? undefined : true),
      { what: 'both images uploaded' },
    );
    await page.getByRole('textbox', { name: 'Message' }).fill('what colours are these?');
    await screenshot(page, SCREENSHOTS, 'composer-with-images');
    expect(await accessibilityViolations(page)).toEqual([]);

    // Removing one takes it out of the message; attached again, it is back in order.
    await previews.getByRole('button', { name: 'Remove image 2 (pasted.png)' }).click();
    expect(await previews.getByRole('listitem').count()).toBe(1);
    await paste(pasted, 'pasted.png');
    await previews.getByRole('img', { name: 'Image 2 to send: pasted.png' }).waitFor();
    await waitFor(
      async () => ((await previews.innerText()).includes('Uploading') ? undefined : true),
      { what: 'the pasted image uploaded again' },
    );

    await page.getByRole('button', { name: 'Send' }).click();
    const log = page.getByRole('log', { name: 'Messages' });
    await waitFor(
      async () =>
        (await log.innerText()).includes('Echo: what colours are these?') ? true : undefined,
      { what: 'the reply' },
    );
    expect(await previews.count()).toBe(0);

    expect(await lastUpstreamQuestion()).toEqual([
      { type: 'text', text: 'what colours are these?' },
      { type: 'image_url', image_url: { url: dataUrl(chosen) } },
      { type: 'image_url', image_url: { url: dataUrl(pasted) } },
    ]);
  });

  it('shows the images in the history after a reload, full size a click away, and regenerates with them', async () => {
    const token = await page.evaluate<string | null>(
      `localStorage.getItem('switchyard.chat.token')`,
    );
    const conversation = new URL(page.url()).pathname.split('/').pop();
    // Reload once the reply is stored (docs/architecture.md, "The chat web app").
    await waitFor(
      async () => {
        const stored = await api('GET', `/api/conversations/${conversation}/messages`, token);
        const { items } = (await stored.json()) as { items: { role: string }[] };
        return items.some((m) => m.role === 'assistant') ? true : undefined;
      },
      { what: 'the reply stored' },
    );
    await page.reload();
    const attached = page.getByRole('list', { name: 'Attached images' });
    const first = attached.getByRole('img', { name: 'Attached image 1' });
    const second = attached.getByRole('img', { name: 'Attached image 2' });
    await first.waitFor();
    await second.waitFor();
    // Drawn, at their own proportions: the bytes came back whole.
    const sizes = await waitFor(
      async () => {
        const drawn = await page.evaluate<[number, number][]>(
          `[...document.querySelectorAll('.attached-images img')].map((image) => [image.naturalWidth, image.naturalHeight])`,
        );
        return drawn.every(([width]) => width > 0) ? drawn : undefined;
      },
      { what: 'both images drawn' },
    );
    expect(sizes).toEqual([
      [96, 64],
      [64, 96],
    ]);
    const opened = attached.getByRole('link').first();
    expect(await opened.getAttribute('target')).toBe('_blank');
    expect(await opened.getAttribute('href')).toMatch(/^blob:/);
    await screenshot(page, SCREENSHOTS, 'history-with-images');
    expect(await accessibilityViolations(page)).toEqual([]);

    // Regenerate asks the same question again, images and all.
    await fetch(`${mock.url}/_mock/reset`, { method: 'POST' });
    await page.getByRole('button', { name: 'Regenerate' }).click();
    await waitFor(
      async () =>
        (await page.getByRole('log', { name: 'Messages' }).innerText()).includes('Echo: what')
          ? await lastUpstreamQuestion()
          : undefined,
      { what: 'the regenerated reply' },
    );
    expect(await lastUpstreamQuestion()).toEqual([
      { type: 'text', text: 'what colours are these?' },
      { type: 'image_url', image_url: { url: dataUrl(chosen) } },
      { type: 'image_url', image_url: { url: dataUrl(pasted) } },
    ]);
    await page.getByRole('button', { name: 'Regenerate' }).waitFor();
    expect(await attached.getByRole('img').count()).toBe(2);
  });

  it('serves an image to its owner only: anyone else gets 404', async () => {
    const token = await page.evaluate<string | null>(
      `localStorage.getItem('switchyard.chat.token')`,
    );
    const conversation = new URL(page.url()).pathname.split('/').pop();
    const stored = await api('GET', `/api/conversations/${conversation}/messages`, token);
    const { items } = (await stored.json()) as { items: { attachments: { url: string }[] }[] };
    const url = items[0]!.attachments[0]!.url;

    const mine = await api('GET', url, token);
    expect(mine.status).toBe(200);
    expect(mine.headers.get('content-type')).toBe('image/png');
    expect(mine.headers.get('cache-control')).toMatch(/^private\b/);
    expect(mine.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await mine.arrayBuffer()).equals(chosen)).toBe(true);

    const other = {
      username: `other${randomBytes(3).toString('hex')}`,
      password: 'another password 1',
    };
    expect((await api('POST', '/api/auth/register', null, other)).status).toBe(201);
    const theirs = await api('GET', url, await login(other));
    expect(theirs.status).toBe(404);
    expect(((await theirs.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect((await api('GET', url, null)).status).toBe(401);
  });

  it('explains a file it cannot take: too large, not an image, or bytes that are no image', async () => {
    await page.getByRole('button', { name: 'New chat' }).click();
    await page.getByLabel('Model').selectOption('eyes-model');
    const input = page.locator('#attach-images');

    await input.setInputFiles({
      name: 'huge.png',
      mimeType: 'image/png',
      buffer: Buffer.concat([chosen, Buffer.alloc(6 * 1024 * 1024)]),
    });
    await composerError()
      .getByText('huge.png has 6 MiB; an image may have at most 5 MiB.')
      .waitFor();

    await input.setInputFiles({
      name: 'notes.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('hi'),
    });
    await composerError()
      .getByText('notes.txt is not an image the chat takes: attach PNG, JPEG, WebP, GIF.')
      .waitFor();

    // Says it is a PNG, is not: only the server, reading the bytes, can tell.
    await input.setInputFiles({
      name: 'fake.png',
      mimeType: 'image/png',
      buffer: Buffer.from('<html>not an image</html>'),
    });
    await composerError()
      .getByText(/The file is not a PNG, JPEG, WebP or GIF image/)
      .waitFor();
    expect(await page.getByRole('list', { name: 'Images to send' }).count()).toBe(0);
    await screenshot(page, SCREENSHOTS, 'refused-image');
    expect(await accessibilityViolations(page)).toEqual([]);
  });
});
