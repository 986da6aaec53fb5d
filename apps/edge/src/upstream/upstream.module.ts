import { Module, type DynamicModule } from '@nestjs/common';
import { UpstreamClient, type UpstreamTimeouts } from './upstream-client.js';

@Module({})
export class UpstreamModule {
  static forRoot(timeouts: UpstreamTimeouts): DynamicModule {
    return {
      module: UpstreamModule,
      providers: [{ provide: UpstreamClient, useFactory: () => new UpstreamClient(timeouts) }],
      exports: [UpstreamClient],
    };
  }
}
