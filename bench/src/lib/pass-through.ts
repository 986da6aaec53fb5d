import {
  Agent,
  request as httpRequest,
  type IncomingMessage,
  type RequestListener,
} from 'node:http';
import { Pool } from 'undici';

// The cheapest pass-throughs Node offers, as request listeners: the floors' whole work
// (bare-proxy.ts), and the work of the service shell's front door (shell-floor.ts).

function contentType(answer: IncomingMessage | { headers: Record<string, unknown> }) {
  const type = answer.headers['content-type'];
  return typeof type === 'string' ? { 'content-type': type } : {};
}

/**
 * The request piped into Node's own `http.request` over a keep-alive `http.Agent`, the answer
 * piped back (no body buffered, no promise).
 */
export function passThroughByPipe(upstreamUrl: URL): RequestListener {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  return (request, response) => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      authorization: request.headers.authorization ?? '',
    };
    if (request.headers['content-length'])
      headers['content-length'] = request.headers['content-length'];
    const forwarded = httpRequest(
      {
        host: upstreamUrl.hostname,
        port: upstreamUrl.port,
        path: request.url ?? '/',
        method: 'POST',
        headers,
        agent,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, contentType(answer));
        answer.pipe(response);
      },
    );
    forwarded.on('error', () => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(forwarded);
  };
}

/**
 * The body read whole and sent with a pooled undici client, the answer written back chunk by
 * chunk (what the edge does).
 */
export function passThroughByUndici(upstreamUrl: URL): RequestListener {
  const upstream = new Pool(upstreamUrl.origin, { connections: 256 });
  return (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      upstream
        .request({
          path: request.url ?? '/',
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: request.headers.authorization ?? '',
          },
          body: Buffer.concat(chunks),
        })
        .then(async (answer) => {
          response.writeHead(answer.statusCode, contentType(answer));
          for await (const chunk of answer.body) response.write(chunk);
          response.end();
        })
        .catch(() => {
          if (!response.headersSent) response.writeHead(502);
          response.end();
        });
    });
  };
}
