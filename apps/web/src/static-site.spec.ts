import request from 'supertest';
import {
  ASSET_JS,
  INDEX_HTML,
  makeSite,
  startWeb,
  type TestSite,
  type TestWeb,
} from './web.fixture.js';
import { contentSecurityPolicy, IMMUTABLE, REVALIDATE, cacheControlFor } from '@switchyard/service';

describe('static site', () => {
  let site: TestSite;
  let web: TestWeb;

  beforeAll(async () => {
    site = makeSite();
    // Nothing listens on port 9: the site must not depend on the chat backend.
    web = await startWeb({ WEB_STATIC_DIR: site.root, CHAT_URL: 'http://127.0.0.1:9' });
  });

  afterAll(async () => {
    await web.close();
    site.remove();
  });

  it('serves index.html at / without caching, under a strict content security policy', async () => {
    const response = await request(web.url).get('/').expect(200);
    expect(response.text).toBe(INDEX_HTML);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.headers['cache-control']).toBe(REVALIDATE);
    expect(response.headers['content-security-policy']).toBe(contentSecurityPolicy(['https:']));
    expect(response.headers['x-content-type-options']).toBe('nosniff');
  });

  it('lets the page show generated media from HTTPS hosts, and nothing unsafe', async () => {
    const policy = String((await request(web.url).get('/')).headers['content-security-policy']);
    const directives = new Map(
      policy.split('; ').map((directive) => {
        const [name, ...sources] = directive.split(' ');
        return [name, sources] as const;
      }),
    );
    expect(directives.get('img-src')).toEqual(["'self'", 'data:', 'blob:', 'https:']);
    expect(directives.get('media-src')).toEqual(["'self'", 'data:', 'blob:', 'https:']);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(policy).not.toContain('unsafe');
    expect(policy).not.toMatch(/ http: /);
  });

  it('revalidates index.html with its ETag', async () => {
    const first = await request(web.url).get('/').expect(200);
    const etag = first.headers['etag'];
    expect(etag).toBeDefined();
    await request(web.url).get('/').set('if-none-match', String(etag)).expect(304);
  });

  it('serves hashed assets with a long, immutable cache', async () => {
    const response = await request(web.url).get('/assets/index-Ab12Cd34.js').expect(200);
    expect(response.text).toBe(ASSET_JS);
    expect(response.headers['content-type']).toMatch(/javascript/);
    expect(response.headers['cache-control']).toBe(IMMUTABLE);
  });

  it('serves other files without the long cache', async () => {
    const response = await request(web.url).get('/favicon.svg').expect(200);
    expect(response.headers['content-type']).toMatch(/^image\/svg\+xml/);
    expect(response.headers['cache-control']).toBe(REVALIDATE);
  });

  it.each(['/login', '/c/42', '/admin/api-keys', '/admin/users?page=2'])(
    'answers the app page %s with index.html (history fallback)',
    async (page) => {
      const response = await request(web.url).get(page).set('accept', 'text/html').expect(200);
      expect(response.text).toBe(INDEX_HTML);
      expect(response.headers['cache-control']).toBe(REVALIDATE);
    },
  );

  it('answers HEAD for pages and assets', async () => {
    const response = await request(web.url).head('/admin').expect(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    await request(web.url).head('/assets/index-Ab12Cd34.js').expect(200);
  });

  it('answers a missing asset with 404, not with the page', async () => {
    const response = await request(web.url).get('/assets/index-Gone0000.js').expect(404);
    expect(response.body).toEqual({
      error: { code: 'not_found', message: 'Nothing at /assets/index-Gone0000.js' },
    });
    await request(web.url).get('/logo.png').expect(404);
  });

  it('never serves a file outside its folder', async () => {
    for (const attempt of ['/..%2f..%2fetc%2fpasswd', '/assets/%2e%2e/%2e%2e/etc/passwd.txt']) {
      const response = await request(web.url).get(attempt);
      expect(response.status).toBe(404);
      expect(response.text).not.toContain('root:');
    }
  });

  it('keeps the health routes, and leaves /metrics to the operations port', async () => {
    await request(web.url).get('/healthz').expect(200, { status: 'ok' });
    const ready = await request(web.url).get('/readyz').expect(200);
    expect(ready.body.status).toBe('ok');
    // The single-page app may answer the path with its page, never with the metrics.
    const metrics = await request(web.url).get('/metrics');
    expect(metrics.headers['content-type']).not.toMatch(/^text\/plain/);
    expect(metrics.text).not.toContain('http_requests');
    expect(metrics.text).not.toContain('nodejs_version_info');
  });

  it('answers other methods on page paths with the API error shape', async () => {
    const response = await request(web.url).post('/login').send({}).expect(404);
    expect(response.body.error.code).toBe('not_found');
  });

  it('gives hashed assets alone the long cache', () => {
    expect(cacheControlFor('assets/index-Ab12Cd34.js')).toBe(IMMUTABLE);
    expect(cacheControlFor('assets/style-00aa11bb.css')).toBe(IMMUTABLE);
    expect(cacheControlFor('index.html')).toBe(REVALIDATE);
    expect(cacheControlFor('favicon.svg')).toBe(REVALIDATE);
  });
});

describe('static site with configured media hosts', () => {
  it('allows exactly those hosts for images, sounds and their downloads', async () => {
    const site = makeSite();
    const web = await startWeb({
      WEB_STATIC_DIR: site.root,
      CHAT_URL: 'http://127.0.0.1:9',
      WEB_MEDIA_SOURCES: 'http://127.0.0.1:18080,https://files.example.com',
    });
    try {
      const policy = String((await request(web.url).get('/')).headers['content-security-policy']);
      const media = 'http://127.0.0.1:18080 https://files.example.com';
      expect(policy).toContain(`img-src 'self' data: blob: ${media};`);
      expect(policy).toContain(`media-src 'self' data: blob: ${media};`);
      expect(policy).toContain(`connect-src 'self' ${media};`);
    } finally {
      await web.close();
      site.remove();
    }
  });

  it.each(["'unsafe-inline'", '*', 'http:', 'https://a.example; script-src *'])(
    'refuses %s as a media source',
    async (source) => {
      await expect(
        startWeb({
          WEB_STATIC_DIR: '/tmp',
          CHAT_URL: 'http://127.0.0.1:9',
          WEB_MEDIA_SOURCES: source,
        }),
      ).rejects.toThrow(/WEB_MEDIA_SOURCES/);
    },
  );
});

describe('static site without a build', () => {
  it('refuses to start and says how to fix it', async () => {
    await expect(
      startWeb({ WEB_STATIC_DIR: '/nonexistent/web-public', CHAT_URL: 'http://127.0.0.1:9' }),
    ).rejects.toThrow(/web client is not built/);
  });
});
