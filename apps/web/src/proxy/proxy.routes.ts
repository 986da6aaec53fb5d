import { type FastifyInstance } from 'fastify';
import { type ChatProxy } from './chat-proxy.js';

/** The A2A agent card's well-known address (docs/tools.md, A2A), served by the chat backend. */
const AGENT_CARD = '/.well-known/agent-card.json';
const CHAT_AGENT_CARD = '/api/a2a/agent-card.json';

/**
 * `/api` and everything under it go to the chat backend, and so does the A2A agent card. In their own scope no body parser
 * runs: the request stream is handed on untouched (any size, any content type).
 */
export async function registerChatProxy(fastify: FastifyInstance, proxy: ChatProxy): Promise<void> {
  await fastify.register((scope, _options, done) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const forward = proxy.forward.bind(proxy);
    scope.all('/api', forward);
    scope.all('/api/*', forward);
    scope.get(AGENT_CARD, (request, reply) => proxy.forwardTo(CHAT_AGENT_CARD, request, reply));
    done();
  });
}
