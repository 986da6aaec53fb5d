import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type GatewayEndpoint } from '@switchyard/contracts';
import { type FastifyInstance } from 'fastify';
import { ProxyService } from './proxy.service.js';

// The forwarded endpoints of the OpenAI-compatible API (docs/specification.md, "Endpoints")
// are Fastify routes of their own rather than Nest controller methods: they use no guard,
// pipe or interceptor, and Nest's router-execution context costs about 30 µs of CPU a
// request on these machines, an eighth of the edge's budget (docs/performance.md). Their
// failures are rendered by the same error handler (errors/openai-exception.filter.ts), in
// OpenAI's shape, or Anthropic's on /v1/messages and /v1/messages/count_tokens.

const FORWARDED: Record<string, GatewayEndpoint> = {
  '/v1/chat/completions': 'chat.completions',
  '/v1/embeddings': 'embeddings',
  '/v1/images/generations': 'images.generations',
  // Anthropic's Messages API, for Anthropic's SDKs and agents (docs/providers.md).
  '/v1/messages': 'messages',
  '/v1/messages/count_tokens': 'messages.count_tokens',
  // OpenAI's Responses API, for agents built on it (docs/providers.md).
  '/v1/responses': 'responses',
};

@Injectable()
export class ProxyRoutes implements OnModuleInit {
  constructor(
    private readonly host: HttpAdapterHost,
    private readonly proxy: ProxyService,
  ) {}

  onModuleInit(): void {
    const fastify = this.host.httpAdapter.getInstance<FastifyInstance>();
    for (const [url, endpoint] of Object.entries(FORWARDED)) {
      fastify.post(url, (request, reply) => this.proxy.handle(endpoint, request, reply));
    }
  }
}
