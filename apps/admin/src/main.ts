import { AdminEnv } from '@switchyard/config';
import { busConnectionOf } from '@switchyard/messaging';
import { startService } from '@switchyard/service';
import { AdminModule } from './admin.module.js';

await startService({
  name: 'admin',
  environment: AdminEnv,
  module: (env) => AdminModule.forRoot(env),
  port: (env) => env.ADMIN_PORT,
  bus: { connection: busConnectionOf, requiredHandlers: [] },
});
