import { Module, type DynamicModule } from '@nestjs/common';
import { type MeteringEnv } from '@switchyard/config';
import { DatabaseModule, DatabaseReadiness } from '@switchyard/db';
import { MessagingModule, RedisReadiness, busConnectionOf } from '@switchyard/messaging';
import { HealthModule, MetricsModule } from '@switchyard/observability';

@Module({})
export class MeteringModule {
  static forRoot(env: MeteringEnv): DynamicModule {
    return {
      module: MeteringModule,
      imports: [
        DatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE }),
        MessagingModule.forRoot(busConnectionOf(env)),
        MetricsModule.forService('metering'),
        HealthModule.register([DatabaseReadiness, RedisReadiness]),
      ],
    };
  }
}
