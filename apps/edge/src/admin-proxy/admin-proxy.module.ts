import { Module, type DynamicModule } from '@nestjs/common';
import { API_BODY_LIMITS } from '@switchyard/contracts';
import { type FastifyInstance } from 'fastify';
import { Pool } from 'undici';
import { AdminProxyController } from './admin-proxy.controller.js';

@Module({})
export class AdminProxyModule {
  static forRoot(adminUrl: string): DynamicModule {
    return {
      module: AdminProxyModule,
      controllers: [AdminProxyController],
      providers: [
        { provide: Pool, useFactory: () => new Pool(adminUrl, { keepAliveTimeout: 30_000 }) },
      ],
    };
  }
}

/** True for the admin API the edge passes through. */
export function isAdminApi(url: string): boolean {
  return url === '/api' || url.startsWith('/api/') || url.startsWith('/api?');
}

/**
 * The admin API's own body limit on its routes here, the first hop: an oversized body is a
 * 413 from the edge, not a connection the admin service cuts (seen by the client as a 502).
 * Must run before the routes are registered.
 */
export function limitAdminBodies(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route) => {
    if (isAdminApi(route.url)) route.bodyLimit = API_BODY_LIMITS.admin;
  });
}
