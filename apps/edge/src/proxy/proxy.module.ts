import { Module, type DynamicModule } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { OpenAIController } from './openai.controller.js';
import { ProxyRoutes } from './proxy.routes.js';
import { PROXY_OPTIONS, ProxyService, type ProxyOptions } from './proxy.service.js';

/** The `/v1` API; needs the routing, upstream and usage modules in the app. */
@Module({})
export class ProxyModule {
  static forRoot(options: ProxyOptions, imports: DynamicModule[]): DynamicModule {
    return {
      module: ProxyModule,
      imports: [AuthModule, ...imports],
      controllers: [OpenAIController],
      providers: [{ provide: PROXY_OPTIONS, useValue: options }, ProxyService, ProxyRoutes],
    };
  }
}
