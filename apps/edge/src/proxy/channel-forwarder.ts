import { type IncomingHttpHeaders } from 'node:http';
import { Injectable } from '@nestjs/common';
import { type GatewayEndpoint } from '@switchyard/contracts';
import { type OutboundRequest } from '@switchyard/providers';
import { type Candidate } from '@switchyard/routing';
import { KeyVault } from '../routing/key-vault.js';
import { UpstreamClient, type UpstreamResponse } from '../upstream/upstream-client.js';
import {
  adapterFor,
  convertRequest,
  countTokensRequest,
  messagesRequest,
  responsesRequest,
} from './provider-conversion.js';
import { bodyFor, type ParsedBody } from './request-body.js';

// The forward step: one request to one channel, the upstream's response back untouched.
// Everything that depends on how a channel's upstream speaks belongs here, behind `forward`;
// a channel of another provider than openai gets the request converted by its adapter
// (libs/providers), and failover.ts converts its answer back (docs/providers.md).

const UPSTREAM_PATH: Record<GatewayEndpoint, string> = {
  'chat.completions': '/chat/completions',
  embeddings: '/embeddings',
  'images.generations': '/images/generations',
  // An openai channel gets a /v1/messages request as a chat completion.
  messages: '/chat/completions',
  // Only anthropic channels are asked to count (failover.ts counts for the others).
  'messages.count_tokens': '/v1/messages/count_tokens',
  responses: '/responses',
};

export interface ForwardRequest {
  endpoint: GatewayEndpoint;
  body: ParsedBody;
  requestId: string;
  /** The client's headers: /v1/messages passes `anthropic-beta` on to anthropic channels. */
  clientHeaders: IncomingHttpHeaders;
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

  /**
   * Sends the request to the candidate's channel. Rejects with `UpstreamUnreachable` when
   * no response came (refused, timed out), with the abort reason when the client left.
   */
  /** The candidate's upstream key, for removing it from what its upstream says. */
  secretOf(candidate: Candidate): string {
    return this.vault.secretOf(candidate.key);
  }

  forward(candidate: Candidate, request: ForwardRequest): Promise<UpstreamResponse> {
    const secret = this.vault.secretOf(candidate.key);
    const adapter = adapterFor(request.endpoint, candidate.channel);
    const settings = candidate.channel.settings ?? {};
    const input = {
      body: request.body,
      upstreamModel: candidate.upstreamModel,
      secret,
      settings,
    };
    let converted: OutboundRequest | null | undefined;
    if (request.endpoint === 'messages')
      converted = messagesRequest(adapter, candidate.channel, {
        ...input,
        beta: request.clientHeaders['anthropic-beta'],
      });
    else if (request.endpoint === 'messages.count_tokens')
      converted = countTokensRequest(candidate.channel, {
        ...input,
        beta: request.clientHeaders['anthropic-beta'],
      });
    else if (request.endpoint === 'responses')
      converted = adapter && responsesRequest(adapter, input);
    else if (adapter)
      converted = convertRequest(
        adapter,
        request.endpoint,
        { ...input, body: request.body.json },
        request.body.stream,
      );
    return this.upstream.send({
      baseUrl: candidate.channel.baseUrl,
      path: converted?.path ?? UPSTREAM_PATH[request.endpoint],
      providerPath: adapter !== null,
      secret,
      headers: converted?.headers,
      sign: converted?.sign,
      body: converted?.body ?? bodyFor(request.body, candidate.upstreamModel),
      requestId: request.requestId,
      accept: request.body.stream ? 'text/event-stream' : 'application/json',
      signal: request.signal,
      firstByteMs: request.firstByteMs,
    });
  }
}
