import { Module, type DynamicModule } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { FRONT_APIS } from '../front-apis/registry.js';
import { ResponseOwners } from '../front-apis/responses/response-owners.js';
import { SpendHolds } from '../quota/spend-holds.js';
import { ChannelBreaker } from './channel-breaker.js';
import { ChannelForwarder } from './channel-forwarder.js';
import { ChannelPicker } from './channel-picker.js';
import { FallbacksModule } from '../fallbacks/fallbacks.module.js';
import { FAILOVER_OPTIONS, Failover, type FailoverOptions } from './failover.js';
import { ModelFallback } from './model-fallback.js';
import { FRONT_DOOR_OPTIONS, FrontDoor, type FrontDoorOptions } from './front-door.js';
import { ProxyService } from './proxy.service.js';
import { Relay } from './relay.js';
import { UsageMeter } from './usage-meter.js';

/** The `/v1` API; needs the routing, upstream and usage modules in the app. */
@Module({})
export class ProxyModule {
  static forRoot(
    options: { failover: FailoverOptions; frontDoor: FrontDoorOptions },
    imports: DynamicModule[],
  ): DynamicModule {
    return {
      module: ProxyModule,
      imports: [AuthModule, FallbacksModule, ...imports],
      // The front APIs the edge answers itself; the forwarded ones are the front door's.
      controllers: FRONT_APIS.flatMap((api) => (api.kind === 'served' ? [api.controller] : [])),
      providers: [
        { provide: FAILOVER_OPTIONS, useValue: options.failover },
        { provide: FRONT_DOOR_OPTIONS, useValue: options.frontDoor },
        ChannelPicker,
        ChannelBreaker,
        ChannelForwarder,
        Failover,
        ModelFallback,
        Relay,
        UsageMeter,
        SpendHolds,
        ResponseOwners,
        ProxyService,
        FrontDoor,
      ],
    };
  }
}
