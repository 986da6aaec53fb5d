import { WebEnv } from '@switchyard/config';
import { type ServiceDefinition } from '@switchyard/service';
import { ChatProxy } from './proxy/chat-proxy.js';
import { registerChatProxy } from './proxy/proxy.routes.js';
import { registerStaticSite, resolveStaticDirectory } from './site/static-site.js';
import { WebModule } from './web.module.js';

/** The web app: the chat single-page app at `/`, the chat API passed through at `/api`. */
export const webDefinition: ServiceDefinition<WebEnv> = {
  name: 'web',
  environment: WebEnv,
  module: (env) => WebModule.forRoot(env),
  port: (env) => env.WEB_PORT,
  configure: async (app, env) => {
    const fastify = app.getHttpAdapter().getInstance();
    await registerChatProxy(fastify, app.get(ChatProxy));
    await registerStaticSite(fastify, resolveStaticDirectory(env.WEB_STATIC_DIR));
  },
};
