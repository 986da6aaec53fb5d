import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type FastifyInstance } from 'fastify';
import { FORWARDED_APIS } from '../front-apis/registry.js';
import { ProxyService } from './proxy.service.js';

// The forwarded front APIs (front-apis/registry.ts; docs/specification.md, "Endpoints") are
// Fastify routes of their own rather than Nest controller methods: they use no guard, pipe
// or interceptor, and Nest's router-execution context costs about 30 µs of CPU a request on
// these machines, an eighth of the edge's budget (docs/performance.md). Their failures are
// rendered by the same error handler (errors/openai-exception.filter.ts), in their API's
// error shape.

@Injectable()
export class ProxyRoutes implements OnModuleInit {
  constructor(
    private readonly host: HttpAdapterHost,
    private readonly proxy: ProxyService,
  ) {}

  onModuleInit(): void {
    const fastify = this.host.httpAdapter.getInstance<FastifyInstance>();
    for (const api of FORWARDED_APIS) {
      const idHeader = api.requestIdHeader;
      for (const { method, path } of api.routes) {
        fastify.route({
          method,
          url: path,
          ...(idHeader
            ? {
                onRequest: (request, reply, done) => {
                  void reply.header(idHeader, request.id);
                  done();
                },
              }
            : {}),
          handler: (request, reply) => this.proxy.handle(api, request, reply),
        });
      }
    }
  }
}
