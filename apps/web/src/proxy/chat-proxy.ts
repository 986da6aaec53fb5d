import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ApiError, bodyTooLargeMessage } from '@switchyard/contracts';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { Transform, type Readable } from 'node:stream';
import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';
import { badGatewayError, badGatewayPage, prefersHtml } from './bad-gateway.js';
import { clientResponseHeaders, upstreamRequestHeaders } from './forwarding.js';

export interface ChatProxyOptions {
  /** Base URL of the chat backend; a path in it prefixes every forwarded path. */
  chatUrl: string;
  headersTimeoutMs: number;
  idleTimeoutMs: number;
  /** The chat API's own body limit, applied here at the first hop. */
  bodyLimit: number;
  /** Paths (without query) whose body has another limit, with the error past it. */
  pathBodyLimits?: Record<string, PathBodyLimit>;
}

export interface PathBodyLimit {
  bytes: number;
  error: () => ApiError;
}

const BODYLESS_STATUS = new Set([204, 205, 304]);

/** Why the backend gave no answer, in words for the log. */
function describeFailure(error: unknown): string {
  if (error instanceof undiciErrors.ConnectTimeoutError) return 'connect timeout';
  if (error instanceof undiciErrors.HeadersTimeoutError) return 'no response headers in time';
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.message : String(error);
}

/** Raised by `limited` when a body without a (truthful) length runs past the limit. */
class BodyTooLarge extends Error {}

/** The request body, failing the exchange with `BodyTooLarge` past `limit` bytes. */
function limited(body: Readable, limit: number): Readable {
  let seen = 0;
  return body.pipe(
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        seen += chunk.length;
        done(seen > limit ? new BodyTooLarge() : null, chunk);
      },
    }),
  );
}

function hasBody(request: FastifyRequest): boolean {
  if (request.method === 'GET' || request.method === 'HEAD') return false;
  const length = request.headers['content-length'];
  return (
    request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')
  );
}

/**
 * Forwards `/api/*` to the chat backend as it comes: method, path, query, headers and the
 * raw body stream go up; status, headers and the body stream come back chunk by chunk,
 * never buffered, so server-sent events reach the browser as they are written.
 */
@Injectable()
export class ChatProxy implements OnApplicationShutdown {
  private readonly logger = new Logger(ChatProxy.name);
  private readonly origin: string;
  private readonly basePath: string;
  private readonly agent: Agent;
  private readonly bodyLimit: PathBodyLimit;
  private readonly pathBodyLimits: Map<string, PathBodyLimit>;

  constructor(options: ChatProxyOptions) {
    this.bodyLimit = {
      bytes: options.bodyLimit,
      error: () => new ApiError('payload_too_large', bodyTooLargeMessage(options.bodyLimit)),
    };
    this.pathBodyLimits = new Map(Object.entries(options.pathBodyLimits ?? {}));
    const url = new URL(options.chatUrl);
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.agent = new Agent({
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.idleTimeoutMs,
      connectTimeout: Math.min(options.headersTimeoutMs, 10_000),
      keepAliveTimeout: 10_000,
    });
  }

  async forward(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    await this.forwardTo(request.raw.url ?? request.url, request, reply);
  }

  /** Forwards the request to `path` (with its query) on the chat backend. */
  async forwardTo(path: string, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const limit = this.pathBodyLimits.get(path.split('?')[0]!) ?? this.bodyLimit;
    if (Number(request.headers['content-length'] ?? 0) > limit.bytes) {
      await this.tooLarge(reply, limit);
      return;
    }
    // The client going away ends the upstream exchange too (a stopped chat stream, say).
    const abort = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });

    let response: Dispatcher.ResponseData;
    try {
      response = await this.agent.request({
        origin: this.origin,
        path: `${this.basePath}${path}`,
        method: request.method,
        headers: upstreamRequestHeaders(request.headers, {
          // The peer itself: the chain before it is the client's to claim.
          clientIp: request.socket.remoteAddress ?? request.ip,
          host: request.host,
          requestId: request.id,
          protocol: request.protocol,
        }),
        body: hasBody(request) ? limited(request.raw, limit.bytes) : null,
        signal: abort.signal,
      });
    } catch (error) {
      if (abort.signal.aborted) return;
      if (error instanceof BodyTooLarge) {
        await this.tooLarge(reply, limit);
        return;
      }
      this.logger.warn(
        `chat backend unreachable for ${request.method} ${request.url}: ${describeFailure(error)}`,
      );
      await this.badGateway(request, reply);
      return;
    }

    const { statusCode, headers, body } = response;
    body.on('error', (error: unknown) => {
      // Headers are gone already: all that is left is to cut the response short.
      if (!abort.signal.aborted) {
        this.logger.warn(`chat backend response broke off: ${describeFailure(error)}`);
      }
      reply.raw.destroy();
    });
    void reply.code(statusCode).headers(clientResponseHeaders(headers));
    if (request.method === 'HEAD' || BODYLESS_STATUS.has(statusCode)) {
      await body.dump();
      await reply.send();
      return;
    }
    await reply.send(body);
  }

  private async tooLarge(reply: FastifyReply, limit: PathBodyLimit): Promise<void> {
    const error = limit.error();
    // The rest of the body is not read: the connection cannot carry another request.
    void reply.code(error.status).header('connection', 'close');
    await reply.type('application/json; charset=utf-8').send(error.toBody());
  }

  private async badGateway(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    void reply.code(502).header('cache-control', 'no-store');
    if (prefersHtml(request.headers.accept)) {
      await reply.type('text/html; charset=utf-8').send(badGatewayPage(request.id));
      return;
    }
    await reply.type('application/json; charset=utf-8').send(badGatewayError().toBody());
  }

  async onApplicationShutdown(): Promise<void> {
    await this.agent.close();
  }
}
