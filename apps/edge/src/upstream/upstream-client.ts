import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { type OutcomeKind } from '@switchyard/contracts';
import { upstreamTarget } from '@switchyard/routing';
import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';

// Upstream HTTP: one keep-alive pool per upstream origin (undici), with the timeouts that
// decide failover: no response headers within the first-byte timeout, or silence longer
// than the idle timeout between two chunks.

export interface UpstreamTimeouts {
  firstByteMs: number;
  idleMs: number;
}

export interface UpstreamCall {
  baseUrl: string;
  /** Path under the OpenAI base, e.g. `/chat/completions`. */
  path: string;
  /** True when `path` is a provider's own route, complete under the base URL (no `/v1` added). */
  providerPath?: boolean;
  secret: string;
  /** A provider's own authentication headers, sent instead of `Authorization: Bearer`. */
  headers?: Record<string, string>;
  /** A provider that signs each request (Bedrock): the signature for the URL it goes to. */
  sign?(url: URL): Promise<Record<string, string>>;
  body: Buffer;
  requestId: string;
  accept?: string;
  signal: AbortSignal;
  /** Wait for response headers; the client's default when absent. */
  firstByteMs?: number;
}

export type UpstreamResponse = Dispatcher.ResponseData;

/** Connection failures that are certain at once: nothing listens, or the name does not resolve. */
const FAST_CONNECT_ERRORS = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** Why an attempt failed before any response arrived. */
export class UpstreamUnreachable extends Error {
  override readonly name = 'UpstreamUnreachable';
  constructor(
    readonly kind: Extract<OutcomeKind, 'timeout' | 'connect_error'>,
    message: string,
    /** The failure was certain within milliseconds (a refused connection). */
    readonly fast = false,
  ) {
    super(message);
  }
}

@Injectable()
export class UpstreamClient implements OnApplicationShutdown {
  private readonly agent: Agent;
  /** Parsed base URLs: a URL parse per request is measurable on the hot path. */
  private readonly targets = new Map<string, { origin: string; path: string }>();

  constructor(readonly timeouts: UpstreamTimeouts) {
    this.agent = new Agent({
      connect: { timeout: Math.min(10_000, timeouts.firstByteMs) },
      headersTimeout: timeouts.firstByteMs,
      bodyTimeout: timeouts.idleMs,
      keepAliveTimeout: 30_000,
    });
  }

  async send(call: UpstreamCall): Promise<UpstreamResponse> {
    const target = call.providerPath ? this.providerTarget(call) : this.openAITarget(call);
    const signature = call.sign ? await call.sign(new URL(target.path, target.origin)) : {};
    try {
      return await this.agent.request({
        origin: target.origin,
        path: target.path,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: call.accept ?? 'application/json',
          ...(call.headers ?? { authorization: `Bearer ${call.secret}` }),
          ...signature,
          'x-request-id': call.requestId,
          'user-agent': 'switchyard-gateway',
        },
        body: call.body,
        signal: call.signal,
        ...(call.firstByteMs !== undefined ? { headersTimeout: call.firstByteMs } : {}),
      });
    } catch (error) {
      if (call.signal.aborted) throw error;
      if (
        error instanceof undiciErrors.HeadersTimeoutError ||
        error instanceof undiciErrors.ConnectTimeoutError
      ) {
        throw new UpstreamUnreachable('timeout', 'the upstream did not answer in time');
      }
      const code = describe(error);
      throw new UpstreamUnreachable(
        'connect_error',
        `the upstream could not be reached (${code})`,
        FAST_CONNECT_ERRORS.has(code),
      );
    }
  }

  private openAITarget(call: UpstreamCall): { origin: string; path: string } {
    const cacheKey = `${call.baseUrl} ${call.path}`;
    let target = this.targets.get(cacheKey);
    if (!target) {
      target = upstreamTarget(call.baseUrl, call.path);
      this.targets.set(cacheKey, target);
    }
    return target;
  }

  private providerTarget(call: UpstreamCall): { origin: string; path: string } {
    let base = this.targets.get(call.baseUrl);
    if (!base) {
      const url = new URL(call.baseUrl);
      base = { origin: url.origin, path: url.pathname.replace(/\/+$/, '') };
      this.targets.set(call.baseUrl, base);
    }
    return { origin: base.origin, path: `${base.path}${call.path}` };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.agent.close();
  }
}

function describe(error: unknown): string {
  const code = (error as { code?: string }).code;
  return code ?? (error instanceof Error ? error.message : String(error));
}
