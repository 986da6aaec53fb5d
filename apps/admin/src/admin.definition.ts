import { AdminEnv } from '@switchyard/config';
import { API_BODY_LIMITS, CREDENTIALS_BODY_LIMIT } from '@switchyard/contracts';
import { type ServiceDefinition } from '@switchyard/service';
import { AdminModule } from './admin.module.js';
import { serveOpenApi } from './openapi.js';

/** How the admin service is built: by `main.ts` in production and by the tests. */
export const adminDefinition: ServiceDefinition<AdminEnv> = {
  name: 'admin',
  environment: AdminEnv,
  module: (env) => AdminModule.forRoot(env),
  port: (env) => env.ADMIN_PORT,
  opsPort: (env) => env.ADMIN_OPS_PORT,
  // The edge forwards the API: its X-Forwarded-For names the client (`request.ip`).
  trustProxy: (env) => env.TRUSTED_PROXIES,
  bodyLimit: () => API_BODY_LIMITS.admin,
  routeBodyLimits: {
    '/api/auth/login': CREDENTIALS_BODY_LIMIT,
    '/api/auth/password': CREDENTIALS_BODY_LIMIT,
  },
  configure: (app) => serveOpenApi(app),
};
