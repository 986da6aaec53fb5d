import { MeteringEnv } from '@switchyard/config';
import { Events } from '@switchyard/contracts';
import { busConnectionOf } from '@switchyard/messaging';
import { type ServiceDefinition } from '@switchyard/service';
import { MeteringModule } from './metering.module.js';

/** How the metering worker starts: in main.ts, and in tests through createService. */
export const meteringDefinition: ServiceDefinition<MeteringEnv> = {
  name: 'metering',
  environment: MeteringEnv,
  module: (env) => MeteringModule.forRoot(env),
  port: (env) => env.METERING_OPS_PORT,
  requestContext: false,
  bus: { connection: busConnectionOf, requiredHandlers: [Events.PriceChanged] },
};
