import { EdgeEnv } from '@switchyard/config';
import { Events } from '@switchyard/contracts';
import { busConnectionOf } from '@switchyard/messaging';
import { startService } from '@switchyard/service';
import { acceptRawBodies } from './proxy/raw-body.js';
import { EdgeModule } from './edge.module.js';

await startService({
  name: 'edge',
  environment: EdgeEnv,
  module: (env) => EdgeModule.forRoot(env),
  port: (env) => env.EDGE_PORT,
  bodyLimit: (env) => env.MAX_BODY_BYTES,
  trustProxy: (env) => env.TRUSTED_PROXIES,
  acceptRequestIds: false,
  requestContext: false,
  bodyParser: false,
  bus: {
    connection: busConnectionOf,
    requiredHandlers: [Events.RoutingSnapshot, Events.TokenChanged, Events.TokenExhausted],
  },
  configure: (app) => acceptRawBodies(app),
});
