import { ChatEnv } from '@switchyard/config';
import { API_BODY_LIMITS, CREDENTIALS_BODY_LIMIT } from '@switchyard/contracts';
import { type ServiceDefinition } from '@switchyard/service';
import { acceptImageBodies } from './attachments/image-body.js';
import { ChatModule } from './chat.module.js';
import { serveOpenApi } from './openapi.js';

/** How the chat service is built: by `main.ts` in production, by the specs in tests. */
export const chatDefinition: ServiceDefinition<ChatEnv> = {
  name: 'chat',
  environment: ChatEnv,
  module: (env) => ChatModule.forRoot(env),
  port: (env) => env.CHAT_PORT,
  opsPort: (env) => env.CHAT_OPS_PORT,
  // The web app forwards the API: its X-Forwarded-For names the browser (`request.ip`).
  trustProxy: (env) => env.TRUSTED_PROXIES,
  bodyLimit: () => API_BODY_LIMITS.chat,
  routeBodyLimits: {
    '/api/auth/login': CREDENTIALS_BODY_LIMIT,
    '/api/auth/register': CREDENTIALS_BODY_LIMIT,
  },
  configure: (app) => {
    acceptImageBodies(app);
    serveOpenApi(app);
  },
};
