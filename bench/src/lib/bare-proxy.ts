import { createServer } from 'node:http';
import { Pool } from 'undici';

// The floor of any Node gateway on this machine: Node's HTTP server and a pooled undici
// client passing a request through to UPSTREAM_URL and its answer back, with nothing else
// (no framework, auth, routing, limits, usage or logs). The gateway benchmark runs it with
// the same pinning as the gateways it measures, so their overheads can be read against it.
//
//   UPSTREAM_URL=http://127.0.0.1:4010 PORT=4020 node bench/dist/lib/bare-proxy.js

const upstream = new Pool(new URL(process.env.UPSTREAM_URL ?? '').origin, { connections: 256 });

createServer((request, response) => {
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
        const type = answer.headers['content-type'];
        response.writeHead(
          answer.statusCode,
          typeof type === 'string' ? { 'content-type': type } : {},
        );
        for await (const chunk of answer.body) response.write(chunk);
        response.end();
      })
      .catch(() => {
        if (!response.headersSent) response.writeHead(502);
        response.end();
      });
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
