import { Injectable } from '@nestjs/common';
import { type GatewayEndpoint } from '@switchyard/contracts';
import { type Candidate } from '@switchyard/routing';
import { KeyVault } from '../routing/key-vault.js';
import { UpstreamClient, type UpstreamResponse } from '../upstream/upstream-client.js';
import { bodyFor, type ParsedBody } from './request-body.js';

// The forward step: one request to one channel, the upstream's response back untouched.
// Everything that depends on how a channel's upstream speaks belongs here, behind `forward`.

const UPSTREAM_PATH: Record<GatewayEndpoint, string> = {
  'chat.completions': '/chat/completions',
  embeddings: '/embeddings',
  'images.generations': '/images/generations',
};

export interface ForwardRequest {
  endpoint: GatewayEndpoint;
  body: ParsedBody;
  requestId: string;
  /** Aborts the upstream call (the client left). */
  signal: AbortSignal;
}

@Injectable()
export class ChannelForwarder {
  constructor(
    private readonly vault: KeyVault,
    private readonly upstream: UpstreamClient,
  ) {}

  /**
   * Sends the request to the candidate's channel. Rejects with `UpstreamUnreachable` when
   * no response came (refused, timed out), with the abort reason when the client left.
   */
  forward(candidate: Candidate, request: ForwardRequest): Promise<UpstreamResponse> {
    return this.upstream.send({
      baseUrl: candidate.channel.baseUrl,
      path: UPSTREAM_PATH[request.endpoint],
      secret: this.vault.secretOf(candidate.key),
      body: bodyFor(request.body, candidate.upstreamModel),
      requestId: request.requestId,
      accept: request.body.stream ? 'text/event-stream' : 'application/json',
      signal: request.signal,
    });
  }
}
