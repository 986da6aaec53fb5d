import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebEnv } from '@switchyard/config';
import { registerStaticSite, type ServiceDefinition } from '@switchyard/service';
import { ChatProxy } from './proxy/chat-proxy.js';
import { registerChatProxy } from './proxy/proxy.routes.js';
import { WebModule } from './web.module.js';

/** Where the build put the app: `WEB_STATIC_DIR`, or `public/` beside `main.js`. */
export function resolveStaticDirectory(configured: string | undefined): string {
  if (configured !== undefined && configured !== '') return path.resolve(configured);
  return path.join(path.dirname(fileURLToPath(import.meta.url)), 'public');
}

/** The web app: the chat single-page app at `/`, the chat API passed through at `/api`. */
export const webDefinition: ServiceDefinition<WebEnv> = {
  name: 'web',
  environment: WebEnv,
  module: (env) => WebModule.forRoot(env),
  port: (env) => env.WEB_PORT,
  opsPort: (env) => env.WEB_OPS_PORT,
  // A proxy in front (nginx, an ingress) whose X-Forwarded-Proto/-Host the web front
  // believes, and passes on to the chat app.
  trustProxy: (env) => env.TRUSTED_PROXIES,
  configure: async (app, env) => {
    const fastify = app.getHttpAdapter().getInstance();
    await registerChatProxy(fastify, app.get(ChatProxy));
    await registerStaticSite(fastify, resolveStaticDirectory(env.WEB_STATIC_DIR), {
      mediaSources: env.WEB_MEDIA_SOURCES,
    });
  },
};
