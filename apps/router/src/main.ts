import { RouterEnv } from '@switchyard/config';
import { Events, Messages } from '@switchyard/contracts';
import { busConnectionOf } from '@switchyard/messaging';
import { startService } from '@switchyard/service';
import { RouterModule } from './router.module.js';

await startService({
  name: 'router',
  environment: RouterEnv,
  module: (env) => RouterModule.forRoot(env),
  port: (env) => env.ROUTER_OPS_PORT,
  bus: {
    connection: busConnectionOf,
    requiredHandlers: [Messages.GetRoutingSnapshot, Events.ChannelChanged, Events.ChannelOutcomes],
  },
});
