import { once } from 'node:events';
import { type OutgoingHttpHeaders } from 'node:http';
import { type FastifyReply } from 'fastify';

// Server-sent events to the browser: named events, written as soon as they exist, with
// back-pressure. A comment line every few seconds keeps proxies from closing a stream
// that waits on a slow upstream.

/**
 * `tools`, `tool_call`, `tool_progress` (a delegated task's state) and `tool_result` carry
 * the tool loop's steps (docs/tools.md).
 */
export type ReplyEvent =
  'delta' | 'image' | 'tools' | 'tool_call' | 'tool_progress' | 'tool_result' | 'done' | 'error';

export interface EventSink {
  /** Aborted when the browser goes away before the stream ended. */
  readonly gone: AbortSignal;
  send(event: ReplyEvent, data: object): Promise<void>;
  end(): void;
}

const HEARTBEAT_MS = 15_000;

export function openEventStream(reply: FastifyReply, heartbeatMs = HEARTBEAT_MS): EventSink {
  reply.hijack();
  const raw = reply.raw;
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) headers[name] = value;
  }
  raw.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    // nginx and similar proxies must pass each event on at once.
    'x-accel-buffering': 'no',
  });
  raw.flushHeaders();

  const gone = new AbortController();
  const heartbeat = setInterval(() => {
    if (!raw.writableEnded) raw.write(': keep-alive\n\n');
  }, heartbeatMs);
  heartbeat.unref();
  raw.once('close', () => {
    clearInterval(heartbeat);
    if (!raw.writableFinished) gone.abort();
  });

  return {
    gone: gone.signal,
    async send(event, data) {
      if (gone.signal.aborted || raw.writableEnded) return;
      if (!raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)) {
        await once(raw, 'drain', { signal: gone.signal }).catch(() => undefined);
      }
    },
    end() {
      clearInterval(heartbeat);
      if (!raw.writableEnded) raw.end();
    },
  };
}
