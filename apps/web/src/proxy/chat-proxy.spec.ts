import { once } from 'node:events';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { type AddressInfo } from 'node:net';
import {
  API_BODY_LIMITS,
  IMAGE_LIMITS,
  bodyTooLargeMessage,
  imageTooLargeMessage,
} from '@switchyard/contracts';
import request from 'supertest';
import { makeSite, startWeb, type TestSite, type TestWeb } from '../web.fixture.js';

// The pass-through against a real HTTP server standing in for the chat backend.

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

interface Signal {
  promise: Promise<void>;
  resolve: () => void;
}

/** A promise with its resolver, to hand control between the fake backend and the test. */
function signal(): Signal {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

async function readBody(message: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of message) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe('chat API pass-through', () => {
  let site: TestSite;
  let web: TestWeb;
  let backend: Server;
  let seen: Seen[];
  let stream: {
    /** Resolved by the test once it has read the first event. */
    firstReceived: Signal;
    /** Resolved by the backend when the client has gone away. */
    clientGone: Signal;
    holdOpen: boolean;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const body = await readBody(req);
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    const url = new URL(req.url ?? '/', 'http://backend');
    if (url.pathname === '/api/conversations/7/messages' && req.method === 'POST') {
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
      });
      res.on('close', () => stream.clientGone.resolve());
      res.write('event: delta\ndata: {"content":"Hel"}\n\n');
      // The next event is written only once the client has seen the first: a proxy
      // that buffered the stream would never let the test get that far.
      await stream.firstReceived.promise;
      res.write('event: delta\ndata: {"content":"lo"}\n\n');
      if (stream.holdOpen) return;
      res.end(
        'event: done\ndata: {"messageId":1,"usage":{"promptTokens":3,"completionTokens":2}}\n\n',
      );
      return;
    }
    if (url.pathname === '/api/auth/login') {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ error: { code: 'invalid_credentials', message: 'Wrong password' } }),
      );
      return;
    }
    if (url.pathname === '/api/auth/logout') {
      res.writeHead(204, { 'set-cookie': ['a=1; Path=/', 'b=2; Path=/'] });
      res.end();
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/json',
      'x-backend': 'chat',
      connection: 'keep-alive, x-hop',
      'x-hop': 'connection-only',
    });
    res.end(JSON.stringify({ ok: true, path: url.pathname }));
  };

  beforeAll(async () => {
    // A request the web front cut short (a body past the limit) rejects; that is expected.
    backend = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
    backend.listen(0, '127.0.0.1');
    await once(backend, 'listening');
    const { port } = backend.address() as AddressInfo;
    site = makeSite();
    web = await startWeb({ WEB_STATIC_DIR: site.root, CHAT_URL: `http://127.0.0.1:${port}` });
  });

  beforeEach(() => {
    seen = [];
    stream = { firstReceived: signal(), clientGone: signal(), holdOpen: false };
  });

  afterAll(async () => {
    await web.close();
    backend.closeAllConnections();
    backend.close();
    site.remove();
  });

  it('forwards method, path, query, body and headers, and returns the answer unchanged', async () => {
    const body = JSON.stringify({ title: 'Trip plans', model: 'gpt-4o' });
    const response = await request(web.url)
      .patch('/api/conversations/12?expand=messages&tag=a%20b')
      .set('authorization', 'Bearer sess-abc')
      .set('content-type', 'application/json')
      .set('x-custom', 'kept')
      .send(body)
      .expect(200);

    expect(response.body).toEqual({ ok: true, path: '/api/conversations/12' });
    expect(response.headers['x-backend']).toBe('chat');
    expect(seen).toHaveLength(1);
    const [forwarded] = seen;
    expect(forwarded?.method).toBe('PATCH');
    expect(forwarded?.url).toBe('/api/conversations/12?expand=messages&tag=a%20b');
    expect(forwarded?.body).toBe(body);
    expect(forwarded?.headers['authorization']).toBe('Bearer sess-abc');
    expect(forwarded?.headers['content-type']).toBe('application/json');
    expect(forwarded?.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(forwarded?.headers['x-custom']).toBe('kept');
  });

  it("serves the chat backend's A2A agent card at /.well-known/agent-card.json", async () => {
    const response = await request(web.url).get('/.well-known/agent-card.json').expect(200);
    expect(response.body).toEqual({ ok: true, path: '/api/a2a/agent-card.json' });
    expect(seen.map((s) => [s.method, s.url])).toEqual([['GET', '/api/a2a/agent-card.json']]);
    expect(seen[0]?.headers['x-forwarded-host']).toBe(new URL(web.url).host);
  });

  // The chat app builds its card's URL from these; a client's own never reach it.
  it('states X-Forwarded-Host/-Proto itself, ignoring those of a client it does not trust', async () => {
    const { port } = backend.address() as AddressInfo;
    const untrusting = await startWeb({
      WEB_STATIC_DIR: site.root,
      CHAT_URL: `http://127.0.0.1:${port}`,
      TRUSTED_PROXIES: '192.0.2.1/32',
    });
    try {
      await request(untrusting.url)
        .get('/.well-known/agent-card.json')
        .set('x-forwarded-host', 'evil.example')
        .set('x-forwarded-proto', 'javascript')
        .expect(200);
      expect(seen[0]?.headers['x-forwarded-host']).toBe(new URL(untrusting.url).host);
      expect(seen[0]?.headers['x-forwarded-proto']).toBe('http');
    } finally {
      await untrusting.close();
    }
  });

  it('passes every method through', async () => {
    await request(web.url).get('/api/models').expect(200);
    await request(web.url).post('/api/conversations').send({ title: 't', model: 'm' }).expect(200);
    await request(web.url).put('/api/anything').send('plain text').expect(200);
    await request(web.url).delete('/api/conversations/3').expect(200);
    await request(web.url).options('/api/models').expect(200);
    await request(web.url).get('/api').expect(200);
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /api/models',
      'POST /api/conversations',
      'PUT /api/anything',
      'DELETE /api/conversations/3',
      'OPTIONS /api/models',
      'GET /api',
    ]);
    expect(seen[2]?.body).toBe('plain text');
  });

  it('adds X-Forwarded-For to the chain and passes the request id both ways', async () => {
    const response = await request(web.url)
      .get('/api/auth/me')
      .set('x-forwarded-for', '203.0.113.7')
      .set('x-request-id', 'req-web-1')
      .expect(200);
    expect(seen[0]?.headers['x-forwarded-for']).toBe('203.0.113.7, 127.0.0.1');
    expect(seen[0]?.headers['x-request-id']).toBe('req-web-1');
    expect(seen[0]?.headers['x-forwarded-proto']).toBe('http');
    expect(seen[0]?.headers['x-forwarded-host']).toBe(new URL(web.url).host);
    expect(response.headers['x-request-id']).toBe('req-web-1');

    const fresh = await request(web.url).get('/api/auth/me').expect(200);
    expect(seen[1]?.headers['x-forwarded-for']).toBe('127.0.0.1');
    expect(seen[1]?.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(fresh.headers['x-request-id']).toBe(seen[1]?.headers['x-request-id']);
  });

  it('drops hop-by-hop headers in both directions', async () => {
    const response = await request(web.url)
      .get('/api/models')
      .set('connection', 'keep-alive, x-private-hop')
      .set('x-private-hop', 'secret')
      .set('proxy-authorization', 'Basic Zm9vOmJhcg==')
      .expect(200);
    expect(seen[0]?.headers['x-private-hop']).toBeUndefined();
    expect(seen[0]?.headers['proxy-authorization']).toBeUndefined();
    expect(response.headers['x-hop']).toBeUndefined();
  });

  it('returns the backend error status and body as they are', async () => {
    const response = await request(web.url)
      .post('/api/auth/login')
      .send({ username: 'ann', password: 'nope' })
      .expect(401);
    expect(response.body).toEqual({
      error: { code: 'invalid_credentials', message: 'Wrong password' },
    });
  });

  it('returns a bodiless answer with all its cookies', async () => {
    const response = await request(web.url).post('/api/auth/logout').expect(204);
    expect(response.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; Path=/']);
  });

  it('forwards a body up to the chat API limit, untouched', async () => {
    const big = Buffer.alloc(API_BODY_LIMITS.chat, 'x').toString();
    await request(web.url)
      .post('/api/upload')
      .set('content-type', 'application/octet-stream')
      .send(big)
      .expect(200);
    expect(seen[0]?.body.length).toBe(big.length);
  });

  it('refuses a larger body itself with 413, without bothering the backend', async () => {
    const big = Buffer.alloc(API_BODY_LIMITS.chat + 1, 'x').toString();
    const response = await request(web.url)
      .post('/api/upload')
      .set('content-type', 'application/json')
      .send(big)
      .expect(413);
    expect(response.body.error).toEqual({
      code: 'payload_too_large',
      message: bodyTooLargeMessage(API_BODY_LIMITS.chat),
    });
    expect(seen).toHaveLength(0);
  });

  it('refuses a body far over the limit with a 413 that Node fetch reads', async () => {
    // Refused by its length while the client still uploads; closing the socket under the
    // upload made fetch report "fetch failed" instead of the answer.
    const response = await fetch(`${web.url}/api/upload`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.alloc(4 * API_BODY_LIMITS.chat, 'x'),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'payload_too_large',
    );
    expect(seen).toHaveLength(0);
  });

  it('lets an image upload be larger than a JSON body, up to the image limit', async () => {
    const image = Buffer.alloc(API_BODY_LIMITS.chat + 1, 1);
    await request(web.url)
      .post('/api/attachments')
      .set('content-type', 'image/png')
      .send(image)
      .expect(200);
    expect(seen[0]?.body.length).toBe(image.length);

    const tooLarge = await request(web.url)
      .post('/api/attachments')
      .set('content-type', 'image/png')
      .send(Buffer.alloc(IMAGE_LIMITS.bytesPerImage + 1, 1))
      .expect(413);
    expect(tooLarge.body.error).toEqual({
      code: 'image_too_large',
      message: imageTooLargeMessage(),
    });
    expect(seen).toHaveLength(1);
  });

  it('refuses a larger body sent in chunks, without a length, with 413', async () => {
    const { port } = new URL(web.url);
    const client = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/upload',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    });
    client.on('error', () => undefined);
    const chunk = Buffer.alloc(256 * 1024, 'x');
    const answered = once(client, 'response') as Promise<[IncomingMessage]>;
    for (let sent = 0; sent <= API_BODY_LIMITS.chat; sent += chunk.length) client.write(chunk);
    client.end();
    const [response] = await answered;
    expect(response.statusCode).toBe(413);
    const body = JSON.parse(await readBody(response)) as { error: { code: string } };
    expect(body.error.code).toBe('payload_too_large');
  });

  it.each([
    ['GET', undefined],
    ['POST', '{"username":"ann","password":"nope"}'],
  ])('passes a %s with Expect: 100-continue through', async (method, body) => {
    const { port } = new URL(web.url);
    const client = httpRequest({
      host: '127.0.0.1',
      port,
      method,
      path: method === 'GET' ? '/api/auth/me' : '/api/auth/login',
      headers: {
        expect: '100-continue',
        ...(body ? { 'content-type': 'application/json', 'content-length': body.length } : {}),
      },
    });
    if (body) client.once('continue', () => client.end(body));
    else client.end();
    const [response] = (await once(client, 'response')) as [IncomingMessage];
    await readBody(response);
    expect(response.statusCode).toBe(method === 'GET' ? 200 : 401);
    expect(seen[0]?.headers['expect']).toBeUndefined();
    if (body) expect(seen[0]?.body).toBe(body);
  });

  it('streams server-sent events event by event', async () => {
    const response = await fetch(`${web.url}/api/conversations/7/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ content: 'Hello?' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    while (!received.includes('\n\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      received += decoder.decode(value, { stream: true });
    }
    // Only the first event exists yet: the backend waits for us before writing more.
    expect(received).toBe('event: delta\ndata: {"content":"Hel"}\n\n');
    stream.firstReceived.resolve();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      received += decoder.decode(value, { stream: true });
    }
    expect(received).toBe(
      'event: delta\ndata: {"content":"Hel"}\n\n' +
        'event: delta\ndata: {"content":"lo"}\n\n' +
        'event: done\ndata: {"messageId":1,"usage":{"promptTokens":3,"completionTokens":2}}\n\n',
    );
    expect(seen[0]?.body).toBe('{"content":"Hello?"}');
  });

  it('ends the backend stream when the client goes away', async () => {
    stream.holdOpen = true;
    const { port } = new URL(web.url);
    const client = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/api/conversations/7/messages',
      headers: { 'content-type': 'application/json' },
    });
    client.on('error', () => undefined);
    client.end('{"content":"long answer please"}');
    const [response] = (await once(client, 'response')) as [IncomingMessage];
    await once(response, 'data');
    stream.firstReceived.resolve();
    // The browser tab closes: the connection is gone.
    client.destroy();
    // Resolves only if the pass-through closed its side of the backend exchange.
    await stream.clientGone.promise;
  });
});

describe('chat API pass-through with the backend down', () => {
  let site: TestSite;
  let web: TestWeb;

  beforeAll(async () => {
    // A port that was just free and that nothing listens on.
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const { port } = closed.address() as AddressInfo;
    closed.close();
    await once(closed, 'close');
    site = makeSite();
    web = await startWeb({ WEB_STATIC_DIR: site.root, CHAT_URL: `http://127.0.0.1:${port}` });
  });

  afterAll(async () => {
    await web.close();
    site.remove();
  });

  it('answers API clients with 502 and a JSON error', async () => {
    const response = await request(web.url)
      .post('/api/auth/login')
      .set('accept', 'application/json')
      .send({ username: 'ann', password: 'secret-pass' })
      .expect(502);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body.error.code).toBe('bad_gateway');
    expect(response.body.error.message).toMatch(/check that the API container is running/i);
  });

  it('answers clients that accept anything with JSON', async () => {
    const response = await request(web.url).get('/api/models').set('accept', '*/*').expect(502);
    expect(response.body.error.code).toBe('bad_gateway');
  });

  it('answers a browser with a readable 502 page', async () => {
    const response = await request(web.url)
      .get('/api/models')
      .set('accept', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8')
      .set('x-request-id', 'req-502-page')
      .expect(502);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.text).toContain('<h1>502 Bad Gateway</h1>');
    expect(response.text).toMatch(/check that the API container is running/i);
    expect(response.text).toContain('req-502-page');
  });

  it('keeps serving the app itself', async () => {
    await request(web.url).get('/').expect(200);
    await request(web.url).get('/readyz').expect(200);
  });
});
