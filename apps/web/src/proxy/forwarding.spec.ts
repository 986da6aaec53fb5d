import { clientResponseHeaders, upstreamRequestHeaders } from './forwarding.js';

const facts = {
  clientIp: '192.0.2.10',
  requestId: 'req-1',
  protocol: 'http',
  host: 'chat.example:8080',
};

describe('upstreamRequestHeaders', () => {
  it('starts the forwarding chain with the client address', () => {
    const headers = upstreamRequestHeaders({ host: 'chat.example:8080', accept: '*/*' }, facts);
    expect(headers).toEqual({
      accept: '*/*',
      'x-forwarded-for': '192.0.2.10',
      'x-forwarded-host': 'chat.example:8080',
      'x-forwarded-proto': 'http',
      'x-request-id': 'req-1',
    });
  });

  it('appends the client address to an existing chain, and states the origin itself', () => {
    const headers = upstreamRequestHeaders(
      {
        'x-forwarded-for': '198.51.100.1, 10.0.0.2',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'chat.example',
        'x-request-id': 'ignored-here',
      },
      facts,
    );
    expect(headers['x-forwarded-for']).toBe('198.51.100.1, 10.0.0.2, 192.0.2.10');
    // What the client claimed is replaced by what this proxy saw (or believed).
    expect(headers['x-forwarded-proto']).toBe('http');
    expect(headers['x-forwarded-host']).toBe('chat.example:8080');
    expect(headers['x-request-id']).toBe('req-1');
  });

  it('passes on no origin that is not an http(s) scheme and a host[:port]', () => {
    const headers = upstreamRequestHeaders(
      { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' },
      { ...facts, protocol: 'javascript', host: 'evil.example/api/a2a' },
    );
    expect(headers['x-forwarded-proto']).toBeUndefined();
    expect(headers['x-forwarded-host']).toBeUndefined();
  });

  it('drops hop-by-hop headers, those named in Connection included', () => {
    const headers = upstreamRequestHeaders(
      {
        connection: 'keep-alive, X-Hop',
        'x-hop': '1',
        'keep-alive': 'timeout=5',
        'transfer-encoding': 'chunked',
        upgrade: 'websocket',
        te: 'trailers',
        authorization: 'Bearer sess-x',
      },
      facts,
    );
    expect(Object.keys(headers).sort()).toEqual([
      'authorization',
      'x-forwarded-for',
      'x-forwarded-host',
      'x-forwarded-proto',
      'x-request-id',
    ]);
  });
});

describe('clientResponseHeaders', () => {
  it('keeps end-to-end headers, repeated ones included', () => {
    expect(
      clientResponseHeaders({
        'content-type': 'text/event-stream',
        'set-cookie': ['a=1', 'b=2'],
        connection: 'close',
        'transfer-encoding': 'chunked',
        'x-absent': undefined,
      }),
    ).toEqual({ 'content-type': 'text/event-stream', 'set-cookie': ['a=1', 'b=2'] });
  });
});
