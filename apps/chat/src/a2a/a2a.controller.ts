import { Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { SSE_HEADERS, formatSSEErrorEvent, formatSSEEvent } from '@a2a-js/sdk';
import { ApiError } from '@switchyard/contracts';
import { isHostAndPort, isWebProtocol } from '@switchyard/service';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { Public, type Principal } from '../auth/principal.js';
import { A2aAuthError, A2aKeysService } from './a2a-keys.service.js';
import {
  A2aEndpointService,
  idOf,
  VERSION_HEADER,
  type JsonRpcEnvelope,
} from './a2a-endpoint.service.js';

// The A2A endpoint (docs/tools.md, A2A): `POST /api/a2a` takes JSON-RPC with an A2A key
// as bearer credential; `GET /api/a2a/agent-card.json` is the card, which the web front
// also serves at /.well-known/agent-card.json. Both are outside the session guard: the
// key is checked here, and a refusal is a JSON-RPC error, which A2A clients understand.

/** JSON-RPC's implementation-defined range: the key was missing, unknown or revoked. */
export const A2A_UNAUTHENTICATED = -32040;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The origin the caller used: the web front's, as its proxy forwards it, or ours. Fastify
 * takes `X-Forwarded-Proto`/`-Host` into `protocol` and `host` only from a peer in
 * TRUSTED_PROXIES; from anyone else they are ignored. Either way the result must be an
 * http(s) scheme and a host[:port], or the card is not served.
 */
function originOf(request: FastifyRequest): string {
  const proto = request.protocol;
  const host = request.host;
  if (!isWebProtocol(proto)) {
    throw new ApiError('validation_failed', 'X-Forwarded-Proto must be http or https', [
      { field: 'x-forwarded-proto', message: 'x-forwarded-proto must be http or https' },
    ]);
  }
  if (!isHostAndPort(host)) {
    throw new ApiError('validation_failed', 'The forwarded host must be a host[:port]', [
      { field: 'x-forwarded-host', message: 'x-forwarded-host must be a host[:port]' },
    ]);
  }
  return `${proto}://${host}`;
}

function isStream(value: unknown): value is AsyncGenerator<JsonRpcEnvelope, void, undefined> {
  return typeof (value as AsyncGenerator | null)?.[Symbol.asyncIterator] === 'function';
}

@ApiExcludeController()
@Public()
@Controller('api/a2a')
export class A2aController {
  constructor(
    private readonly endpoint: A2aEndpointService,
    private readonly keys: A2aKeysService,
  ) {}

  @Get('agent-card.json')
  async card(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await reply
      .header('cache-control', 'no-cache')
      .type('application/json')
      .send(await this.endpoint.card(originOf(request)));
  }

  @Post()
  @HttpCode(200)
  async rpc(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const version = header(request, VERSION_HEADER);
    let principal: Principal;
    try {
      principal = await this.keys.authenticate(request.headers.authorization);
    } catch (error) {
      if (!(error instanceof A2aAuthError)) throw error;
      await reply
        .code(401)
        .header('www-authenticate', 'Bearer realm="a2a"')
        .send({
          jsonrpc: '2.0',
          id: idOf(request.body),
          error: {
            code: A2A_UNAUTHENTICATED,
            message: error.message,
            data: { reason: error.reason },
          },
        });
      return;
    }
    const outcome = await this.endpoint.handle(request.body, principal, version);
    if (!isStream(outcome)) {
      await reply.code(200).send(outcome);
      return;
    }
    // The SDK's adapters answer an error before the first event as plain JSON, too.
    const iterator = outcome[Symbol.asyncIterator]();
    let first: IteratorResult<JsonRpcEnvelope, void>;
    try {
      first = await iterator.next();
    } catch (error) {
      await reply.code(200).send({
        jsonrpc: '2.0',
        id: idOf(request.body),
        error: this.endpoint.mapError(error, this.endpoint.isLegacy(version)),
      });
      return;
    }
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, SSE_HEADERS);
    try {
      if (!first.done) raw.write(formatSSEEvent(first.value));
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        if (raw.destroyed) break;
        raw.write(formatSSEEvent(next.value));
      }
    } catch (error) {
      if (!raw.destroyed) {
        raw.write(
          formatSSEErrorEvent({
            jsonrpc: '2.0',
            id: idOf(request.body),
            error: this.endpoint.mapError(error, this.endpoint.isLegacy(version)),
          }),
        );
      }
    } finally {
      raw.end();
    }
  }
}
