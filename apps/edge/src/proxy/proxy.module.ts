import { Module, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { SpendHolds } from '../quota/spend-holds.js';
import { ChannelBreaker } from './channel-breaker.js';
import { ChannelForwarder } from './channel-forwarder.js';
import { ChannelPicker } from './channel-picker.js';
import { FAILOVER_OPTIONS, Failover, type FailoverOptions } from './failover.js';
import { loadTokenCounter } from './local-token-count.js';
import { OpenAIController } from './openai.controller.js';
import { ProxyRoutes } from './proxy.routes.js';
import { ProxyService } from './proxy.service.js';
import { Relay } from './relay.js';
import { UsageMeter } from './usage-meter.js';

/** The `/v1` API; needs the routing, upstream and usage modules in the app. */
@Module({})
export class ProxyModule implements OnModuleInit {
  onModuleInit(): Promise<void> {
    return loadTokenCounter();
  }

  static forRoot(options: FailoverOptions, imports: DynamicModule[]): DynamicModule {
    return {
      module: ProxyModule,
      imports: [AuthModule, ...imports],
      controllers: [OpenAIController],
      providers: [
        { provide: FAILOVER_OPTIONS, useValue: options },
        ChannelPicker,
        ChannelBreaker,
        ChannelForwarder,
        Failover,
        Relay,
        UsageMeter,
        SpendHolds,
        ProxyService,
        ProxyRoutes,
      ],
    };
  }
}
