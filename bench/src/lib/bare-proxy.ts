import { Agent, createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import { Pool } from 'undici';

// The floor of any Node gateway on this machine: Node's HTTP server passing a request
// through to UPSTREAM_URL and its answer back, with nothing else (no framework, auth,
// routing, limits, usage or logs). Two clients, the cheapest pass-throughs Node offers:
//
// - `pipe`: the request piped into Node's own `http.request` over a keep-alive `http.Agent`,
//   the answer piped back (no body buffered, no promise);
// - `undici`: the body read whole and sent with a pooled undici client, the answer written
//   back chunk by chunk (what the edge does).
//
// The gateway benchmark runs both, pinned like the gateways it measures, and reads each
// figure against the cheaper of the two in the same run (docs/performance.md, "Against the
// floor").
//
//   FLOOR_CLIENT=pipe UPSTREAM_URL=http://127.0.0.1:4010 PORT=4020 node bench/dist/lib/bare-proxy.js

const upstreamUrl = new URL(process.env.UPSTREAM_URL ?? '');
const client = process.env.FLOOR_CLIENT ?? 'undici';

function contentType(answer: IncomingMessage | { headers: Record<string, unknown> }) {
  const type = answer.headers['content-type'];
  return typeof type === 'string' ? { 'content-type': type } : {};
}

function viaPipe(): Parameters<typeof createServer>[1] {
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

function viaUndici(): Parameters<typeof createServer>[1] {
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

if (client !== 'pipe' && client !== 'undici')
  throw new Error(`FLOOR_CLIENT must be pipe or undici, not ${client}`);
createServer({}, client === 'pipe' ? viaPipe() : viaUndici()).listen(
  Number(process.env.PORT),
  '127.0.0.1',
);
