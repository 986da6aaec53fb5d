import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { AccountPool, type AccountLease } from '../accounts/account-pool.js';
import { RequestLog } from '../accounts/request-log.js';
import { FaultPlan, type Fault } from '../faults/fault-plan.js';
import { providerError } from './openai-error.js';

// The part of every request that is the same on each endpoint: who is calling, whether
// their account may, and what fault the test asked for. What is left for the endpoint is
// to write its answer.

export interface Exchange {
  lease: AccountLease;
  fault: Fault;
  reply: FastifyReply;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** How a provider reads its key and words its errors; OpenAI's unless an endpoint says otherwise. */
export interface Dialect {
  /** Request headers that carry the key (kept out of the request log). */
  keyHeaders: string[];
  keyOf(request: FastifyRequest): string | undefined;
  error(status: number, overrides?: { type?: string; code?: string; message?: string }): unknown;
  /** Headers that name the error (AWS's `x-amzn-errortype`), for providers whose body does not. */
  errorHeaders?(status: number, overrides?: { code?: string }): Record<string, string>;
  /** The statuses of an unknown and of a deactivated key; 401 for both unless it says otherwise. */
  refusals?: { unknownKey: number; bannedKey: number };
}

export const OPENAI_DIALECT: Dialect = {
  keyHeaders: ['authorization'],
  keyOf(request) {
    const header = request.headers.authorization;
    return header?.startsWith('Bearer ') ? header.slice(7).trim() : undefined;
  },
  error: providerError,
};

function maskKey(key: string | undefined): string {
  return key ? `${key.slice(0, 3)}...${key.slice(-4)}` : '(none)';
}

@Injectable()
export class ExchangeService {
  constructor(
    private readonly accounts: AccountPool,
    private readonly faults: FaultPlan,
    private readonly log: RequestLog,
  ) {}

  /**
   * Admits the request and applies its fault. Resolves with the exchange when the endpoint
   * should answer, or null when the request has already been answered (or left hanging).
   */
  async open(
    request: FastifyRequest,
    reply: FastifyReply,
    promptTokens: number,
    dialect: Dialect = OPENAI_DIALECT,
  ): Promise<Exchange | null> {
    const key = dialect.keyOf(request);
    if (key) {
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(
          ([name, value]) => !dialect.keyHeaders.includes(name) && typeof value === 'string',
        ),
      ) as Record<string, string>;
      this.log.add({ key, path: request.url, headers, body: request.body, at: Date.now() });
    }
    const admission = this.accounts.admit(key, promptTokens);
    if (admission.kind === 'unknown') {
      const status = dialect.refusals?.unknownKey ?? 401;
      await reply
        .status(status)
        .headers(dialect.errorHeaders?.(status, { code: 'invalid_api_key' }) ?? {})
        .send(
          dialect.error(status, {
            code: 'invalid_api_key',
            message: `Incorrect API key provided: ${maskKey(key)}.`,
          }),
        );
      return null;
    }
    if (admission.kind === 'banned') {
      const status = dialect.refusals?.bannedKey ?? 401;
      await reply
        .status(status)
        .headers(dialect.errorHeaders?.(status, { code: 'account_deactivated' }) ?? {})
        .send(
          dialect.error(status, {
            code: admission.echoKey ? 'invalid_api_key' : 'account_deactivated',
            message: admission.echoKey
              ? `Incorrect API key provided: ${key ?? ''}. You can find your API key at https://platform.example/account/api-keys.`
              : 'This account has been deactivated.',
          }),
        );
      return null;
    }
    if (admission.kind === 'limited') {
      const type = admission.limit === 'tokens' ? 'tokens' : 'requests';
      const message = `Rate limit reached on ${admission.limit} for account ${maskKey(key)}. Please try again in ${admission.retryAfterSeconds}s.`;
      await reply
        .status(429)
        .header('retry-after', String(admission.retryAfterSeconds))
        .headers(dialect.errorHeaders?.(429) ?? {})
        .send(dialect.error(429, { type, message }));
      return null;
    }

    const { lease } = admission;
    const abort = new AbortController();
    // The response closes either when it is done or when the client hung up first.
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
      lease.finish('failed', 0);
    });
    const fault = this.faults.resolve(key, request.headers);

    if (fault.hang) {
      // Nothing is ever sent; the lease ends when the client hangs up.
      reply.hijack();
      return null;
    }
    if (fault.latencyMs) {
      try {
        await sleep(fault.latencyMs, undefined, { signal: abort.signal });
      } catch {
        return null;
      }
    }
    if (fault.disconnectAfterChunks === 0 && !fault.status) {
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'application/json' });
      reply.raw.flushHeaders();
      request.raw.socket.destroy();
      return null;
    }
    if (fault.body !== undefined) {
      lease.finish('failed', 0);
      await reply
        .status(fault.status ?? 200)
        .header('content-type', fault.contentType ?? 'application/json')
        .send(fault.body);
      return null;
    }
    if (fault.status) {
      lease.finish('failed', 0);
      await reply
        .status(fault.status)
        .headers(dialect.errorHeaders?.(fault.status) ?? {})
        .send(dialect.error(fault.status));
      return null;
    }
    return { lease, fault, reply, signal: abort.signal };
  }
}

/**
 * Writes server-sent events (or, with another content type, binary event frames) with
 * back-pressure, honouring the fault's delays and cut.
 */
export async function writeEvents(
  exchange: Exchange,
  events: (string | Uint8Array)[],
  contentType = 'text/event-stream; charset=utf-8',
): Promise<boolean> {
  const { reply, fault, signal } = exchange;
  reply.hijack();
  const socket = reply.raw;
  socket.writeHead(200, {
    'content-type': contentType,
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  socket.flushHeaders();
  let sent = 0;
  for (const event of events) {
    if (signal.aborted) return false;
    if (fault.disconnectAfterChunks !== undefined && sent >= fault.disconnectAfterChunks) {
      // Let what was written reach the client before the connection is cut.
      await new Promise((resolve) => socket.write('', resolve));
      socket.destroy();
      return false;
    }
    if (fault.chunkDelayMs && sent > 0) {
      try {
        await sleep(fault.chunkDelayMs, undefined, { signal });
      } catch {
        return false;
      }
    }
    if (!socket.write(event)) await once(socket, 'drain', { signal }).catch(() => undefined);
    sent += 1;
  }
  socket.end();
  return true;
}
