import { type FastifyInstance } from 'fastify';
import { type ChatProxy } from './chat-proxy.js';

/**
 * `/api` and everything under it go to the chat backend. In their own scope no body parser
 * runs: the request stream is handed on untouched (any size, any content type).
 */
export async function registerChatProxy(fastify: FastifyInstance, proxy: ChatProxy): Promise<void> {
  await fastify.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const forward = proxy.forward.bind(proxy);
    scope.all('/api', forward);
    scope.all('/api/*', forward);
  });
}
