import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { imagesOf, latestMessages, listMessages, readMessage, sendMessage } from './chat-api.js';
import { type Problem } from '@switchyard/ui/client';
import { client } from './client.js';
import { type Usage } from './types.js';

describe('reading streamed and stored replies', () => {
  it('reads the tool steps saved with a reply, dropping what is not a step', () => {
    const message = readMessage({
      role: 'assistant',
      content: 'The tool answered: sunny',
      toolSteps: [
        {
          id: 'call_1',
          kind: 'tool',
          server: 'weather',
          tool: 'get_forecast',
          arguments: { address: '1 Main St' },
          ok: true,
          result: 'sunny',
          durationMs: 12,
        },
        {
          id: 'c2',
          kind: 'connect',
          server: 'down',
          ok: false,
          error: { code: 'server_unreachable', message: 'fetch failed' },
          durationMs: 0,
        },
        {
          id: 'c3',
          kind: 'delegate',
          server: 'research',
          tool: 'delegate_to_research',
          arguments: { message: 'find it' },
          ok: true,
          result: 'found',
          durationMs: 900,
        },
        { nonsense: true },
      ],
    });
    expect(message?.toolSteps).toEqual([
      {
        id: 'call_1',
        kind: 'tool',
        server: 'weather',
        tool: 'get_forecast',
        arguments: { address: '1 Main St' },
        ok: true,
        result: 'sunny',
        durationMs: 12,
      },
      {
        id: 'c2',
        kind: 'connect',
        server: 'down',
        ok: false,
        error: { code: 'server_unreachable', message: 'fetch failed' },
        durationMs: 0,
      },
      {
        id: 'c3',
        kind: 'delegate',
        server: 'research',
        tool: 'delegate_to_research',
        arguments: { message: 'find it' },
        ok: true,
        result: 'found',
        durationMs: 900,
      },
    ]);
  });

  it('reads messages with their images and usage', () => {
    expect(
      readMessage({
        id: 3,
        role: 'assistant',
        content: '',
        images: ['https://img.example/a.png', { url: 'https://img.example/b.png' }, 'javascript:x'],
        usage: { promptTokens: 4, completionTokens: 0 },
      }),
    ).toEqual({
      id: 3,
      role: 'assistant',
      content: '',
      images: ['https://img.example/a.png', 'https://img.example/b.png'],
      usage: { promptTokens: 4, completionTokens: 0 },
    });
    expect(readMessage({ role: 'tool', content: 'x' })).toBeNull();
    expect(imagesOf({ urls: ['data:image/png;base64,AAAA', 'ftp://nope'] })).toEqual([
      'data:image/png;base64,AAAA',
    ]);
  });
});

describe('the chat API over HTTP', () => {
  let server: Server;
  let answer: (res: ServerResponse, body: string) => void;
  let received: { url: string; body: string; accept: string | undefined }[];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        received.push({ url: req.url ?? '', body, accept: req.headers.accept });
        answer(res, body);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    client.setOrigin(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });

  beforeEach(() => {
    received = [];
  });

  afterAll(() => {
    server.close();
  });

  const sse = (res: ServerResponse) =>
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });

  async function send(model?: string) {
    const log: string[] = [];
    const outcome: { messageId?: number; usage?: Usage; problem?: Problem } = {};
    await sendMessage(
      '7',
      { content: 'Draw a cat', ...(model ? { model } : {}) },
      {
        delta: (text) => log.push(`delta:${text}`),
        images: (urls) => log.push(`images:${urls.join(',')}`),
        done: (messageId, usage) => {
          log.push('done');
          Object.assign(outcome, { messageId, usage });
        },
        error: (problem) => {
          log.push(`error:${problem.code}`);
          outcome.problem = problem;
        },
      },
      new AbortController().signal,
    );
    return { log, outcome };
  }

  it('reads a whole conversation page by page, oldest first', async () => {
    const stored = Array.from({ length: 250 }, (_, i) => ({
      id: i + 1,
      role: 'user',
      content: `m${i + 1}`,
      imageUrls: [],
      attachments: [],
      model: null,
      status: 'complete',
      errorCode: null,
      toolSteps: [],
      usage: { promptTokens: 0, completionTokens: 0 },
      createdAt: new Date(0).toISOString(),
    }));
    answer = (res) => {
      const query = new URL(received.at(-1)!.url, 'http://web').searchParams;
      const [page, size] = [Number(query.get('page')), Number(query.get('pageSize'))];
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ items: stored.slice((page - 1) * size, page * size), total: 250 }));
    };
    const messages = await listMessages('7');
    expect(messages.map((m) => m.content)).toEqual(stored.map((m) => m.content));
    expect(received.map((r) => r.url)).toEqual([
      '/api/conversations/7/messages?page=1&pageSize=200',
      '/api/conversations/7/messages?page=2&pageSize=200',
    ]);
  });

  it('opens a conversation on its latest page and reads the page before what is shown', async () => {
    const stored = (id: number) => ({
      id,
      role: 'user',
      content: `m${id}`,
      imageUrls: [],
      attachments: [],
      model: null,
      status: 'complete',
      errorCode: null,
      toolSteps: [],
      usage: { promptTokens: 0, completionTokens: 0 },
      createdAt: new Date(0).toISOString(),
    });
    answer = (res) => {
      const query = new URL(received.at(-1)!.url, 'http://web').searchParams;
      const before = Number(query.get('before') ?? 131);
      const first = Math.max(1, before - Number(query.get('pageSize')));
      const items = Array.from({ length: before - first }, (_, i) => stored(first + i));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ items, total: before - 1 }));
    };
    const latest = await latestMessages('7');
    expect(latest.messages.map((m) => m.id)).toEqual(Array.from({ length: 50 }, (_, i) => 81 + i));
    expect(latest.older).toBe(80);
    const earlier = await latestMessages('7', 81);
    expect(earlier.messages[0]?.id).toBe(31);
    expect(earlier.older).toBe(30);
    expect(received.map((r) => r.url)).toEqual([
      '/api/conversations/7/messages?start=latest&pageSize=50',
      '/api/conversations/7/messages?start=latest&pageSize=50&before=81',
    ]);
  });

  it('hands over deltas, images and the end of the reply in order', async () => {
    answer = (res) => {
      sse(res);
      res.write('event: delta\ndata: {"content":"Here "}\n\n');
      res.write('event: delta\ndata: {"content":"it is"}\n\n');
      res.write('event: image\ndata: {"urls":["https://img.example/cat.png"]}\n\n');
      res.end(
        'event: done\ndata: {"messageId":41,"usage":{"promptTokens":5,"completionTokens":2}}\n\n',
      );
    };
    const { log, outcome } = await send('dall-e-3');
    expect(log).toEqual([
      'delta:Here ',
      'delta:it is',
      'images:https://img.example/cat.png',
      'done',
    ]);
    expect(outcome).toEqual({ messageId: 41, usage: { promptTokens: 5, completionTokens: 2 } });
    expect(received[0]?.url).toBe('/api/conversations/7/messages');
    expect(JSON.parse(received[0]?.body ?? '')).toEqual({
      content: 'Draw a cat',
      model: 'dall-e-3',
    });
    expect(received[0]?.accept).toContain('text/event-stream');
  });

  it('reports an error event with the provider address', async () => {
    answer = (res) => {
      sse(res);
      res.write('event: delta\ndata: {"content":"Hel"}\n\n');
      res.end(
        'event: error\ndata: {"code":"upstream_failed","message":"Upstream refused","address":"https://relay.example.com"}\n\n',
      );
    };
    const { log, outcome } = await send();
    expect(log).toEqual(['delta:Hel', 'error:upstream_failed']);
    expect(outcome.problem?.address).toBe('https://relay.example.com');
    expect(outcome.problem?.message).toBe('Upstream refused');
  });

  it('reports a refusal before the stream with its code', async () => {
    answer = (res) => {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'model_not_permitted', message: 'Not for you' } }));
    };
    const { log, outcome } = await send('gpt-4-all');
    expect(log).toEqual(['error:model_not_permitted']);
    expect(outcome.problem?.status).toBe(403);
  });

  it('says so when the stream ends without its done event', async () => {
    answer = (res) => {
      sse(res);
      res.end('event: delta\ndata: {"content":"half"}\n\n');
    };
    const { log } = await send();
    expect(log).toEqual(['delta:half', 'error:stream_interrupted']);
  });

  it('explains a 502 without a JSON body as the chat service being down', async () => {
    answer = (res) => {
      res.writeHead(502, { 'content-type': 'text/html' });
      res.end('<h1>502</h1>');
    };
    const { outcome } = await send();
    expect(outcome.problem?.code).toBe('bad_gateway');
  });
});
