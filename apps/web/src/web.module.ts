import { Module, type DynamicModule } from '@nestjs/common';
import { type WebEnv } from '@switchyard/config';
import { HealthModule, MetricsModule } from '@switchyard/observability';

@Module({})
export class WebModule {
  static forRoot(_env: WebEnv): DynamicModule {
    return {
      module: WebModule,
      imports: [MetricsModule.forService('web'), HealthModule.register([])],
    };
  }
}
