import { clientResponseHeaders, upstreamRequestHeaders } from './forwarding.js';

const facts = { clientIp: '192.0.2.10', requestId: 'req-1', protocol: 'http' };

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

  it('appends the client address to an existing chain and keeps the first proxy facts', () => {
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
    expect(headers['x-forwarded-proto']).toBe('https');
    expect(headers['x-forwarded-host']).toBe('chat.example');
    expect(headers['x-request-id']).toBe('req-1');
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
