import { once } from 'node:events';
import { type ServerResponse } from 'node:http';
import { Injectable } from '@nestjs/common';
import { redactSecrets } from '@switchyard/observability';
import { RequestLog } from '../request-log/request-log.js';
import { OutcomeReporter } from '../usage/outcome-reporter.js';
import { type Delivery, type RoutedExchange } from './exchange.js';
import { type Answered } from './failover.js';
import { StreamObserver, WholeEvents } from './stream-observer.js';
import { channelOutcome } from './upstream-answer.js';

// The relay step: the upstream's answer (success or the client's own error) to the client
// as it comes, and what was delivered for metering. Nothing here is retried: bytes are out.
// The answer is in the caller's front API's shape already (failover.ts); a stream broken
// off ends with that API's error event.

const PASSED_HEADERS = ['content-type', 'openai-processing-ms', 'openai-version'];

@Injectable()
export class Relay {
  constructor(
    private readonly outcomes: OutcomeReporter,
    private readonly requestLog: RequestLog,
  ) {}

  /** Resolves once the client has the whole answer (or has left). */
  async deliver(exchange: RoutedExchange, answered: Answered): Promise<Delivery> {
    const { response: client, api } = exchange;
    const { attempt, response, answer, attemptStarted } = answered;
    const firstByteMs = Math.round(performance.now() - exchange.startedAt);
    // An answer the edge made itself (a token count) is a 200 with no upstream headers.
    const status = response?.statusCode ?? 200;
    for (const name of PASSED_HEADERS) {
      const value = response?.headers[name];
      if (typeof value === 'string') client.setHeader(name, value);
    }
    if (answer.kind === 'whole') {
      const summary = answer.summary ?? null;
      // The failover step read it as JSON: it goes out as JSON, whatever the upstream called
      // it (the SDKs hand a text/plain answer to the caller as a string).
      if (summary) client.setHeader('content-type', 'application/json');
      sendWhole(client, status, answer.body);
      return {
        status,
        errorCode: status < 400 ? null : 'upstream_client_error',
        usage: summary?.usage ?? null,
        upstreamModel: summary?.model ?? attempt.candidate.upstreamModel,
        completionText: summary?.completionText ?? '',
        firstByteMs,
        ...(api.imagesOf && summary ? { images: api.imagesOf(summary) } : {}),
        ...(exchange.token.requestLog ? { responseSample: answer.body } : {}),
      };
    }

    if (answer.translator?.contentType)
      client.setHeader('content-type', answer.translator.contentType);
    client.setHeader('cache-control', 'no-cache');
    client.setHeader('x-accel-buffering', 'no');
    const observer = new StreamObserver();
    const events = new WholeEvents();
    // Only a token with the request log on pays for a copy of the stream's first bytes.
    const sample = exchange.token.requestLog ? this.requestLog.sample() : null;
    // Audio bytes have no events to keep whole, nor any the observer could read.
    const take = (chunk: Buffer): Buffer | null => {
      sample?.add(chunk);
      if (answer.binary) return chunk;
      observer.see(chunk);
      return events.take(chunk);
    };
    const out = new ClientStream(client, status, exchange.abort.signal);
    let interrupted: string | null = null;
    try {
      if (answer.first) await out.write(take(answer.first));
      for (let next = await answer.rest.next(); !next.done; next = await answer.rest.next()) {
        await out.write(take(next.value));
        // The client left early: stop reading (and paying for) the upstream's answer.
        if (out.gone) break;
      }
      // A translated stream says itself how it ended; OpenAI's ends with [DONE], and one
      // that stops before it (mid-event, say) was cut, however cleanly the body closed.
      if (out.gone) {
        // Nothing more to say to a client that left.
      } else if (!answer.translator && !observer.ended) {
        interrupted = 'the upstream ended the stream before its [DONE] event';
        await out.write(Buffer.from(api.interruption(interrupted)));
      } else if (events.rest) {
        await out.write(events.rest);
      }
    } catch (error) {
      if (!exchange.abort.signal.aborted) {
        // Keys the edge opened are registered with the redaction (key-vault.ts).
        interrupted = redactSecrets((error as Error).message);
        // Audio cut short has no error event: the connection is cut too, so the client
        // sees a broken download rather than a short file.
        if (answer.binary) client.destroy();
        else
          await out.write(
            Buffer.from(
              answer.translator?.interrupt?.(interrupted) ?? api.interruption(interrupted),
            ),
          );
      }
    } finally {
      await answer.rest.return?.();
      out.end();
    }
    await out.closed;
    const summary = observer.summary();
    interrupted ??= answer.translator?.failure ? redactSecrets(answer.translator.failure) : null;
    const clientGone = exchange.abort.signal.aborted;
    // A finished stream reports again only when it broke: its start already counted as ok.
    if (interrupted)
      this.outcomes.add(
        channelOutcome(
          attempt.candidate,
          'server_error',
          attemptStarted,
          response ?? undefined,
          interrupted,
        ),
      );
    return {
      status,
      errorCode: interrupted ? 'stream_interrupted' : clientGone ? 'client_closed' : null,
      usage: answer.translator?.usage ?? summary.usage,
      upstreamModel: summary.model ?? attempt.candidate.upstreamModel,
      completionText: summary.completionText,
      firstByteMs,
      ...(sample ? { responseSample: sample } : {}),
    };
  }
}

/** A whole answer, with its length; the type of bytes that came without one is kept. */
function sendWhole(client: ServerResponse, status: number, body: Buffer): void {
  if (client.destroyed) return;
  if (!client.hasHeader('content-type'))
    client.setHeader('content-type', 'application/octet-stream');
  // A 204 or 304 has no body: Node drops one given to `end` and must not announce it.
  const bodiless = status === 204 || status === 304;
  if (!bodiless) client.setHeader('content-length', body.length);
  client.writeHead(status);
  client.end(bodiless ? undefined : body);
}

/**
 * A streamed answer written straight to the client's socket, with back-pressure: each event
 * is one write, as in the floor's pass-through (docs/performance.md, "Streams relayed").
 */
class ClientStream {
  readonly closed: Promise<void>;
  private corked = false;

  constructor(
    private readonly client: ServerResponse,
    status: number,
    /** Aborted when the client leaves before the answer finished (proxy.service.ts). */
    private readonly leaving: AbortSignal,
  ) {
    this.closed = new Promise<void>((resolve) => client.once('close', () => resolve()));
    client.writeHead(status);
  }

  get gone(): boolean {
    const client = this.client;
    return this.leaving.aborted || client.destroyed || client.writableEnded;
  }

  /** Resolves once the socket takes more (or the client has left). */
  async write(chunk: Buffer | null): Promise<void> {
    if (chunk === null || this.gone) return;
    this.corkForTheTurn();
    if (this.client.write(chunk)) return;
    await once(this.client, 'drain', { signal: this.leaving }).catch(() => undefined);
  }

  /**
   * What is written in one turn of the event loop leaves in one system call: the
   * upstream's last read and the stream's end (the chunked terminator, sent with whatever
   * the socket holds corked) mostly come in the same turn, and went out as two writes
   * (docs/performance.md, "Metrics by the scrape, and a stream's last write"). The socket
   * is corked, not the response:
   * a response's own cork keeps chunks back from `end`, which would send its terminator
   * before them.
   */
  private corkForTheTurn(): void {
    const socket = this.client.socket;
    if (this.corked || !socket) return;
    this.corked = true;
    socket.cork();
    setImmediate(() => {
      this.corked = false;
      // `end` has flushed it already; the socket may be serving the next request by now.
      if (!this.client.writableEnded && !socket.destroyed) socket.uncork();
    });
  }

  end(): void {
    if (!this.gone) this.client.end();
  }
}
