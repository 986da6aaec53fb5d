import { type OutcomeKind } from '@switchyard/contracts';
import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';

// Sending one request to a channel's upstream, for every service that does it: the edge's
// forwarding (the hot path), the admin's channel test and model listing, the router's
// probes. One keep-alive pool per upstream origin (undici's Agent), with the timeouts that
// decide failover: no response headers within the first-byte timeout, or silence longer
// than the idle timeout between two chunks (docs/providers.md, "Sending to a channel").

export interface ChannelClientOptions {
  /** Wait for the connection and the response headers; a call may set its own. */
  firstByteMs: number;
  /** Longest silence between two chunks of a response body. */
  idleMs: number;
  /** Sent as `user-agent` unless a call names its own. */
  userAgent: string;
}

export interface ChannelCall {
  baseUrl: string;
  /** Path under the OpenAI base, e.g. `/chat/completions`, or the provider's own route. */
  path: string;
  /** True when `path` is a provider's own route, complete under the base URL (no `/v1` added). */
  providerPath?: boolean;
  /**
   * POST unless named: model listings, key-less probes and reads of a stored Response ask
   * with GET; a stored Response is deleted with DELETE.
   */
  method?: 'GET' | 'POST' | 'DELETE';
  secret: string;
  /**
   * A provider's own authentication headers, sent instead of `Authorization: Bearer`; a
   * lower-case `content-type` among them replaces JSON's.
   */
  headers?: Record<string, string>;
  /** A provider that signs each request (Bedrock): the signature for the URL it goes to. */
  sign?(url: URL): Promise<Record<string, string>>;
  /** Sent as JSON unless `headers` names its type; absent for a GET. */
  body?: Buffer | string;
  /** Sent as `x-request-id`, so the upstream's logs can be matched to ours. */
  requestId?: string;
  accept?: string;
  userAgent?: string;
  signal?: AbortSignal;
  /** Wait for response headers; the client's default when absent. */
  firstByteMs?: number;
}

export type ChannelResponse = Dispatcher.ResponseData;

/** Connection failures that are certain at once: nothing listens, or the name does not resolve. */
const FAST_CONNECT_ERRORS = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** Why a call failed before any response arrived; `cause` is undici's error. */
export class ChannelUnreachable extends Error {
  override readonly name = 'ChannelUnreachable';
  constructor(
    readonly kind: Extract<OutcomeKind, 'timeout' | 'connect_error'>,
    message: string,
    /** The failure was certain within milliseconds (a refused connection). */
    readonly fast = false,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

interface Target {
  origin: string;
  path: string;
}

/** Parsed base URLs kept at most; a long-lived admin is asked about URLs it never sees again. */
const MAX_CACHED_TARGETS = 4096;

/**
 * Where an OpenAI route of a channel lives: `https://relay.example/openai` (with or
 * without a trailing `/v1`) and `/chat/completions` give the origin and
 * `/openai/v1/chat/completions`.
 */
export function upstreamTarget(baseUrl: string, path: string): Target {
  const url = new URL(baseUrl);
  const base = url.pathname.replace(/\/+$/, '');
  const versioned = base.endsWith('/v1') ? base : `${base}/v1`;
  return { origin: url.origin, path: `${versioned}${path}` };
}

export class ChannelClient {
  private readonly agent: Agent;
  /** Parsed base URLs: a URL parse per request is measurable on the hot path. */
  private readonly targets = new Map<string, Target>();

  constructor(readonly options: ChannelClientOptions) {
    this.agent = new Agent({
      connect: { timeout: Math.min(10_000, options.firstByteMs) },
      headersTimeout: options.firstByteMs,
      bodyTimeout: options.idleMs,
      keepAliveTimeout: 30_000,
    });
  }

  /**
   * Sends the call. Rejects with `ChannelUnreachable` when no response came (refused, timed
   * out), with the abort reason when the caller's signal ended it.
   */
  async send(call: ChannelCall): Promise<ChannelResponse> {
    const target = call.providerPath ? this.providerTarget(call) : this.openAITarget(call);
    const signature = call.sign ? await call.sign(new URL(target.path, target.origin)) : {};
    const headers: Record<string, string> = {
      accept: call.accept ?? 'application/json',
      ...(call.headers ?? { authorization: `Bearer ${call.secret}` }),
      ...signature,
      'user-agent': call.userAgent ?? this.options.userAgent,
    };
    // JSON unless the call names its own type (a multipart upload's, with its boundary).
    if (call.body !== undefined) headers['content-type'] ??= 'application/json';
    if (call.requestId !== undefined) headers['x-request-id'] = call.requestId;
    try {
      return await this.agent.request({
        origin: target.origin,
        path: target.path,
        method: call.method ?? 'POST',
        headers,
        body: call.body,
        signal: call.signal,
        ...(call.firstByteMs !== undefined ? { headersTimeout: call.firstByteMs } : {}),
      });
    } catch (error) {
      if (call.signal?.aborted) throw error;
      if (
        error instanceof undiciErrors.HeadersTimeoutError ||
        error instanceof undiciErrors.ConnectTimeoutError
      ) {
        throw new ChannelUnreachable('timeout', 'the upstream did not answer in time', false, {
          cause: error,
        });
      }
      const code = describe(error);
      throw new ChannelUnreachable(
        'connect_error',
        `the upstream could not be reached (${code})`,
        FAST_CONNECT_ERRORS.has(code),
        { cause: error },
      );
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }

  private openAITarget(call: ChannelCall): Target {
    const cacheKey = `${call.baseUrl} ${call.path}`;
    let target = this.targets.get(cacheKey);
    if (!target) {
      target = upstreamTarget(call.baseUrl, call.path);
      this.remember(cacheKey, target);
    }
    return target;
  }

  private providerTarget(call: ChannelCall): Target {
    let base = this.targets.get(call.baseUrl);
    if (!base) {
      const url = new URL(call.baseUrl);
      base = { origin: url.origin, path: url.pathname.replace(/\/+$/, '') };
      this.remember(call.baseUrl, base);
    }
    return { origin: base.origin, path: `${base.path}${call.path}` };
  }

  private remember(key: string, target: Target): void {
    if (this.targets.size >= MAX_CACHED_TARGETS) this.targets.clear();
    this.targets.set(key, target);
  }
}

/**
 * A response body's first `limit` bytes; the rest is not read, and the connection is given
 * up rather than drained, so an upstream cannot make us hold more than `limit`.
 */
export async function readAtMost(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  limit: number,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, limit);
}

function describe(error: unknown): string {
  const code = (error as { code?: string }).code;
  return code ?? (error instanceof Error ? error.message : String(error));
}
