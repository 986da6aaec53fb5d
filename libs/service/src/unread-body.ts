import { type IncomingMessage } from 'node:http';
import { type FastifyInstance } from 'fastify';

// A reply sent before the request's body has been read (a 413 by its Content-Length, a
// body refused part-way, a proxied answer that came before the upload ended) used to be
// followed by closing the socket while the client was still writing. curl shows the
// answer, but Node's fetch (under the OpenAI and Anthropic SDKs) reports "fetch failed"
// on the broken write and never reads it. The rest of the body is read and dropped
// instead, within a bound, so the client finishes its upload and reads the answer
// (docs/reliability.md, "Defects of the edges of the services").

/** Bytes read and dropped after the reply: this many times the route's body limit... */
export const UNREAD_BODY_DRAIN_FACTOR = 4;
/** ...but at least this much, so a small limit still lets a typical oversized prompt end. */
export const UNREAD_BODY_DRAIN_MIN_BYTES = 16 * 1024 * 1024;
/** And for no longer than this after the reply; a slower client has its connection closed. */
export const UNREAD_BODY_DRAIN_MS = 15_000;

function hasBody(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return raw.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Reads and drops what is left of a request's body once its reply is on its way, up to
 * `maxBytes` or `maxMs`; past either, the connection is closed. The connection is kept
 * alive otherwise: once the body has ended, HTTP's framing is intact.
 */
export function drainUnreadBody(raw: IncomingMessage, maxBytes: number, maxMs: number): void {
  let dropped = 0;
  // Taken now: once the reply is written, Node detaches the request from its socket.
  const socket = raw.socket;
  const cut = () => {
    cleanUp();
    socket.destroy();
  };
  const timer = setTimeout(cut, maxMs);
  timer.unref();
  const onData = (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > maxBytes) cut();
  };
  const cleanUp = () => {
    clearTimeout(timer);
    raw.off('data', onData);
    raw.off('end', cleanUp);
    raw.off('close', cleanUp);
    raw.off('error', cleanUp);
  };
  raw.on('data', onData);
  raw.once('end', cleanUp);
  raw.once('close', cleanUp);
  raw.once('error', cleanUp);
  // Another reader (a parser that gave up, a proxy's pipe) may have paused it.
  raw.resume();
}

/** Whether a reply about to go out leaves some of its request's body unread. */
export function bodyLeftUnread(raw: IncomingMessage): boolean {
  return !raw.complete && !raw.destroyed && hasBody(raw);
}

/** The drain of a route whose bodies may have `bodyLimit` bytes, once its reply is out. */
export function drainUnreadBodyOf(raw: IncomingMessage, bodyLimit: number): void {
  drainUnreadBody(
    raw,
    Math.max(UNREAD_BODY_DRAIN_FACTOR * bodyLimit, UNREAD_BODY_DRAIN_MIN_BYTES),
    UNREAD_BODY_DRAIN_MS,
  );
}

/** Installs the drain on every reply of `fastify` that goes out before its body was read. */
export function drainUnreadBodies(fastify: FastifyInstance, defaultBodyLimit: number): void {
  fastify.addHook('onSend', (request, reply, payload, done) => {
    const raw = request.raw;
    if (bodyLeftUnread(raw)) {
      // `Connection: close` would make Node close the socket as soon as the reply is
      // written, under the client's upload: the drain decides when it closes instead.
      reply.removeHeader('connection');
      drainUnreadBodyOf(raw, request.routeOptions.bodyLimit ?? defaultBodyLimit);
    }
    done(null, payload);
  });
}
