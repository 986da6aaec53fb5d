import { Injectable } from '@nestjs/common';
import { type Candidate } from '@switchyard/routing';
import { type UpstreamRequest } from '../front-apis/front-api.js';
import { KeyVault } from '../routing/key-vault.js';
import { UpstreamClient, type UpstreamResponse } from '../upstream/upstream-client.js';

// The forward step: one request to one channel, the upstream's response back untouched.
// What the request is, in the channel's provider's format, is the caller's front API's to
// say (front-apis/, `call`); failover.ts has it converted and its answer converted back.

export interface ForwardRequest {
  upstream: UpstreamRequest;
  requestId: string;
  stream: boolean;
  /** Aborts the upstream call (the client left). */
  signal: AbortSignal;
  /** How long to wait for the response headers. */
  firstByteMs: number;
}

@Injectable()
export class ChannelForwarder {
  constructor(
    private readonly vault: KeyVault,
    private readonly upstream: UpstreamClient,
  ) {}

  /** The candidate's upstream key, for its request and for removing it from what it says. */
  secretOf(candidate: Candidate): string {
    return this.vault.secretOf(candidate.key);
  }

  /**
   * Sends the request to the candidate's channel. Rejects with `UpstreamUnreachable` when
   * no response came (refused, timed out), with the abort reason when the client left.
   */
  forward(candidate: Candidate, request: ForwardRequest): Promise<UpstreamResponse> {
    const { upstream } = request;
    return this.upstream.send({
      baseUrl: candidate.channel.baseUrl,
      path: upstream.path,
      providerPath: upstream.providerPath,
      secret: this.vault.secretOf(candidate.key),
      headers: upstream.headers,
      sign: upstream.sign?.bind(upstream),
      body: upstream.body,
      requestId: request.requestId,
      accept: request.stream ? 'text/event-stream' : 'application/json',
      signal: request.signal,
      firstByteMs: request.firstByteMs,
    });
  }
}
