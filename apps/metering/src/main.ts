import { MeteringEnv } from '@switchyard/config';
import { startService } from '@switchyard/service';
import { MeteringModule } from './metering.module.js';

await startService({
  name: 'metering',
  environment: MeteringEnv,
  module: (env) => MeteringModule.forRoot(env),
  port: (env) => env.METERING_OPS_PORT,
});
