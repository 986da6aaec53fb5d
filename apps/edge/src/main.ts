import { EdgeEnv } from '@switchyard/config';
import { busConnectionOf } from '@switchyard/messaging';
import { startService } from '@switchyard/service';
import { EdgeModule } from './edge.module.js';

await startService({
  name: 'edge',
  environment: EdgeEnv,
  module: (env) => EdgeModule.forRoot(env),
  port: (env) => env.EDGE_PORT,
  bodyLimit: (env) => env.MAX_BODY_BYTES,
  bus: { connection: busConnectionOf, requiredHandlers: [] },
});
