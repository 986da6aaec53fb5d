import { EdgeEnv } from '@switchyard/config';
import { Events } from '@switchyard/contracts';
import { busConnectionOf } from '@switchyard/messaging';
import { type ServiceDefinition } from '@switchyard/service';
import { limitAdminBodies } from './admin-proxy/admin-proxy.module.js';
import { dashboardDirectory, serveDashboard } from './dashboard/dashboard-site.js';
import { TokenDirectory } from './auth/token-directory.js';
import { FrontDoor } from './proxy/front-door.js';
import { acceptRawBodies } from './proxy/raw-body.js';
import { EdgeModule } from './edge.module.js';
import { replyWithError } from './errors/openai-exception.filter.js';

/** How the edge is built: `main.ts` starts it; a spec may build it with `createService`. */
export const edgeDefinition: ServiceDefinition<EdgeEnv> = {
  name: 'edge',
  environment: EdgeEnv,
  module: (env) => EdgeModule.forRoot(env),
  port: (env) => env.EDGE_PORT,
  opsPort: (env) => env.EDGE_OPS_PORT,
  bodyLimit: (env) => env.MAX_BODY_BYTES,
  trustProxy: (env) => env.TRUSTED_PROXIES,
  acceptRequestIds: false,
  requestContext: false,
  logSuccessfulRequests: false,
  bodyParser: false,
  replyToRefusal: replyWithError,
  // The forwarded /v1 routes, served ahead of Fastify (proxy/front-door.ts).
  frontDoor: (app, hooks) => app.get(FrontDoor).servedHere(hooks),
  bus: {
    connection: busConnectionOf,
    requiredHandlers: [
      Events.RoutingChanged,
      Events.TokenChanged,
      Events.TokenExhausted,
      Events.PriceChanged,
      Events.ModelFallbackChanged,
      Events.BudgetChanged,
      Events.TeamChanged,
      Events.PriceGroupChanged,
    ],
    // Token events heard by no one while the subscriber was away: read every token again.
    onSubscribed: (app) => app.get(TokenDirectory).expireAll(),
  },
  configure: async (app, env, logger) => {
    acceptRawBodies(app);
    limitAdminBodies(app.getHttpAdapter().getInstance());
    // Failures of the routes Fastify serves (the models lists, stored responses, `/api`).
    app
      .getHttpAdapter()
      .getInstance()
      .setErrorHandler((error, request, reply) => replyWithError(error, request, reply));
    await serveDashboard(
      app.getHttpAdapter().getInstance(),
      dashboardDirectory(env.DASHBOARD_DIR),
      logger,
    );
  },
};
