import { RouterEnv } from '@switchyard/config';
import { Events, Messages } from '@switchyard/contracts';
import { busConnectionOf } from '@switchyard/messaging';
import { type ServiceDefinition } from '@switchyard/service';
import { RouterModule } from './router.module.js';

/** How the router is built: `main.ts` starts it; a spec may build it with `createService`. */
export const routerDefinition: ServiceDefinition<RouterEnv> = {
  name: 'router',
  environment: RouterEnv,
  module: (env) => RouterModule.forRoot(env),
  port: (env) => env.ROUTER_OPS_PORT,
  bus: {
    connection: busConnectionOf,
    requiredHandlers: [Messages.GetRoutingSnapshot, Events.ChannelChanged, Events.ChannelOutcomes],
  },
};
