import { Controller, Delete, Get, Param, Post, Req, Res } from '@nestjs/common';
import { GatewayError, type RoutedChannel, type RoutedKey } from '@switchyard/contracts';
import { redactSecrets } from '@switchyard/observability';
import { readAtMost } from '@switchyard/providers';
import { type FastifyReply, type FastifyRequest } from 'fastify';
import { TokenAuthenticator } from '../../auth/token-authenticator.js';
import { type GatewayToken } from '../../auth/token-directory.js';
import { RoutingState } from '../../routing/routing-state.js';
import { KeyVault } from '../../routing/key-vault.js';
import {
  UpstreamClient,
  UpstreamUnreachable,
  type UpstreamResponse,
} from '../../upstream/upstream-client.js';
import { UsagePublisher } from '../../usage/usage-publisher.js';
import { bearerCredential } from '../openai-shape.js';
import { ResponseOwners, type ResponseOwner } from './response-owners.js';

// The follow-ups of a stored Response (docs/providers.md, "Stored responses"): read it,
// delete it, cancel a background run, list its input. Each goes to the channel and the
// upstream key that created it (response-owners.ts), never to another: a Response lives in
// the project of its key, so no failover could find it elsewhere. Only the gateway token
// that created it may ask (any other gets the same 404 as for an unknown id). Follow-ups
// cost nothing: each is logged as a usage row with no tokens.

/** The most of an upstream's non-stream answer read (a Response with a long output). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** Retry-After of a follow-up whose channel is resting. */
const RESTING_RETRY_MS = 5_000;

type FollowUp = 'retrieve' | 'delete' | 'cancel' | 'input_items';

const UPSTREAM_CALLS: Record<FollowUp, { method: 'GET' | 'POST' | 'DELETE'; suffix: string }> = {
  retrieve: { method: 'GET', suffix: '' },
  delete: { method: 'DELETE', suffix: '' },
  cancel: { method: 'POST', suffix: '/cancel' },
  input_items: { method: 'GET', suffix: '/input_items' },
};

@Controller('v1/responses')
export class StoredResponsesController {
  constructor(
    private readonly authenticator: TokenAuthenticator,
    private readonly owners: ResponseOwners,
    private readonly routing: RoutingState,
    private readonly vault: KeyVault,
    private readonly upstream: UpstreamClient,
    private readonly usage: UsagePublisher,
  ) {}

  @Get(':id')
  retrieve(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<void> {
    return this.followUp('retrieve', id, request, reply);
  }

  @Delete(':id')
  delete(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<void> {
    return this.followUp('delete', id, request, reply);
  }

  @Post(':id/cancel')
  cancel(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<void> {
    return this.followUp('cancel', id, request, reply);
  }

  @Get(':id/input_items')
  inputItems(
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
    @Param('id') id: string,
  ): Promise<void> {
    return this.followUp('input_items', id, request, reply);
  }

  private async followUp(
    kind: FollowUp,
    id: string,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<void> {
    const requestedAt = Date.now();
    const startedAt = performance.now();
    const token = await this.authenticator.authenticate(
      bearerCredential(request.headers),
      request.ip,
      requestedAt,
    );
    let owner: ResponseOwner | null = null;
    let firstByteMs: number | null = null;
    let status = 200;
    let errorCode: string | null = null;
    try {
      owner = await this.ownerOf(id, token);
      const { channel, key } = this.reachable(owner);
      // The client left before the answer was out: the upstream call is cancelled.
      const abort = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) abort.abort();
      });
      const response = await this.send(kind, id, request, channel, key, abort.signal);
      firstByteMs = Math.round(performance.now() - startedAt);
      status = response.statusCode;
      if (status >= 400) errorCode = 'upstream_client_error';
      await this.relay(response, reply, this.vault.secretOf(key));
      if (kind === 'delete' && status < 300) await this.owners.forget(id);
    } catch (error) {
      const refused = error instanceof GatewayError ? error : null;
      status = refused?.status ?? 500;
      errorCode = refused?.code ?? 'internal_error';
      throw error;
    } finally {
      this.usage.record({
        requestId: request.id,
        tokenId: token.id,
        channelId: owner?.channelId ?? null,
        keyId: owner?.keyId ?? null,
        endpoint: 'responses',
        model: owner?.model ?? '',
        upstreamModel: owner?.upstreamModel ?? null,
        stream: false,
        status,
        errorCode,
        // Reading back what was already billed costs nothing.
        usage: { promptTokens: 0, completionTokens: 0 },
        latencyMs: Math.round(performance.now() - startedAt),
        firstByteMs,
        attempts: owner ? 1 : 0,
        clientIp: request.ip,
        requestedAt,
      });
    }
  }

  /** Who created the Response: only its own token may follow it up. */
  private async ownerOf(id: string, token: GatewayToken): Promise<ResponseOwner> {
    let owner: ResponseOwner | null;
    try {
      owner = await this.owners.find(id);
    } catch (error) {
      throw new GatewayError(
        'service_unavailable',
        `Stored responses cannot be looked up right now (${(error as Error).message}); retry in a moment.`,
        null,
        { retryAfterMs: 1_000 },
      );
    }
    // Another token's Response is answered as an unknown one: its existence is not told.
    if (!owner || owner.tokenId !== token.id)
      throw new GatewayError(
        'response_not_found',
        `No response with id '${id}' was created through this gateway with this token, or it is older than the 30 days it is kept.`,
        'response_id',
      );
    return owner;
  }

  /** The channel and key that created the Response, as the routing snapshot has them now. */
  private reachable(owner: ResponseOwner): { channel: RoutedChannel; key: RoutedKey } {
    const snapshot = this.routing.table?.snapshot;
    if (!snapshot)
      throw new GatewayError(
        'service_unavailable',
        'The gateway has no routing state yet; retry in a moment.',
        null,
        { retryAfterMs: 1_000 },
      );
    const channel = snapshot.channels.find((c) => c.id === owner.channelId);
    if (!channel && (snapshot.resting ?? []).some((c) => c.id === owner.channelId))
      throw new GatewayError(
        'no_available_channel',
        'The channel that stored this response is resting (unhealthy or cooling down); retry later.',
        null,
        { retryAfterMs: RESTING_RETRY_MS },
      );
    const key = channel?.keys.find((k) => k.id === owner.keyId);
    if (!channel || !key)
      throw new GatewayError(
        'response_gone',
        'The channel or upstream key that stored this response has been removed or disabled, so the response can no longer be reached.',
        'response_id',
      );
    return { channel, key };
  }

  private async send(
    kind: FollowUp,
    id: string,
    request: FastifyRequest,
    channel: RoutedChannel,
    key: RoutedKey,
    signal: AbortSignal,
  ): Promise<UpstreamResponse> {
    const { method, suffix } = UPSTREAM_CALLS[kind];
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    const secret = this.vault.secretOf(key);
    try {
      return await this.upstream.send({
        baseUrl: channel.baseUrl,
        path: `/responses/${encodeURIComponent(id)}${suffix}${query}`,
        method,
        secret,
        requestId: request.id,
        accept: /[?&]stream=true/.test(query) ? 'text/event-stream' : 'application/json',
        signal,
        firstByteMs: channel.firstByteTimeoutMs ?? this.upstream.timeouts.firstByteMs,
      });
    } catch (error) {
      if (!(error instanceof UpstreamUnreachable)) throw error;
      const message = redactSecrets(error.message, [secret]);
      // No failover: no other channel has this Response.
      throw error.kind === 'timeout'
        ? new GatewayError('upstream_timeout', `The upstream did not answer in time (${message}).`)
        : new GatewayError('upstream_error', `The upstream request failed (${message}).`);
    }
  }

  /** The upstream's answer as it came: a stream (a background run read again) piped. */
  private async relay(
    response: UpstreamResponse,
    reply: FastifyReply,
    secret: string,
  ): Promise<void> {
    const type = String(response.headers['content-type'] ?? 'application/json');
    void reply.status(response.statusCode).header('content-type', type);
    if (type.includes('text/event-stream') && response.statusCode < 400) {
      void reply.header('cache-control', 'no-cache');
      await reply.send(response.body);
      return;
    }
    const body = await readAtMost(response.body, MAX_ANSWER_BYTES);
    // What an upstream says never carries its key to the client.
    await reply.send(redactSecrets(body.toString('utf8'), [secret]));
  }
}
