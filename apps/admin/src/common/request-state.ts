import { type AdminPrincipal } from './actor.js';

// What the access guard learns about a request, kept for the handlers and decorators.

declare module 'fastify' {
  interface FastifyRequest {
    admin?: AdminPrincipal;
  }
}

export {};
