import { Module, type DynamicModule } from '@nestjs/common';
import { QueueConnection } from '@switchyard/messaging';
import { Registry } from '@switchyard/observability';
import { RequestLog, type RequestLogOptions } from './request-log.js';

@Module({})
export class RequestLogModule {
  static forRoot(options: Omit<RequestLogOptions, 'queues'>): DynamicModule {
    return {
      module: RequestLogModule,
      providers: [
        {
          provide: RequestLog,
          useFactory: (queues: QueueConnection, registry: Registry) =>
            new RequestLog({ ...options, queues }, registry),
          inject: [QueueConnection, Registry],
        },
      ],
      exports: [RequestLog],
    };
  }
}
