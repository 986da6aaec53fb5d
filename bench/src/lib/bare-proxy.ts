import { createServer } from 'node:http';
import { passThroughByPipe, passThroughByUndici } from './pass-through.js';

// The floor of any Node gateway on this machine: Node's HTTP server passing a request
// through to UPSTREAM_URL and its answer back, with nothing else (no framework, auth,
// routing, limits, usage or logs). Two clients, the cheapest pass-throughs Node offers
// (pass-through.ts): `pipe`, over Node's own `http.request`, and `undici`, over a pooled
// undici client as the edge forwards.
//
// The gateway benchmark runs both, pinned like the gateways it measures, and reads each
// figure against the cheaper of the two in the same run (docs/performance.md, "Against the
// floor").
//
//   FLOOR_CLIENT=pipe UPSTREAM_URL=http://127.0.0.1:4010 PORT=4020 node bench/dist/lib/bare-proxy.js

const upstreamUrl = new URL(process.env.UPSTREAM_URL ?? '');
const client = process.env.FLOOR_CLIENT ?? 'undici';

if (client !== 'pipe' && client !== 'undici')
  throw new Error(`FLOOR_CLIENT must be pipe or undici, not ${client}`);
createServer(
  {},
  client === 'pipe' ? passThroughByPipe(upstreamUrl) : passThroughByUndici(upstreamUrl),
).listen(Number(process.env.PORT), '127.0.0.1');
