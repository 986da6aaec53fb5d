import { Module, type DynamicModule } from '@nestjs/common';
import { QueueConnection } from '@switchyard/messaging';
import { Registry } from '@switchyard/observability';
import { OutcomeReporter } from './outcome-reporter.js';
import { RequestMetrics } from './request-metrics.js';
import { UsagePublisher } from './usage-publisher.js';

@Module({})
export class UsageModule {
  static forRoot(spoolDirectory: string): DynamicModule {
    return {
      module: UsageModule,
      providers: [
        {
          provide: UsagePublisher,
          useFactory: (queues: QueueConnection, registry: Registry) =>
            new UsagePublisher({ queues, spoolDirectory }, registry, new RequestMetrics(registry)),
          inject: [QueueConnection, Registry],
        },
        OutcomeReporter,
      ],
      exports: [UsagePublisher, OutcomeReporter],
    };
  }
}
