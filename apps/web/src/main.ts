import { WebEnv } from '@switchyard/config';
import { startService } from '@switchyard/service';
import { WebModule } from './web.module.js';

await startService({
  name: 'web',
  environment: WebEnv,
  module: (env) => WebModule.forRoot(env),
  port: (env) => env.WEB_PORT,
});
