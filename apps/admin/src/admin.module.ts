import { Module, type DynamicModule } from '@nestjs/common';
import { type AdminEnv } from '@switchyard/config';
import { DatabaseModule, DatabaseReadiness } from '@switchyard/db';
import { MessagingModule, RedisReadiness, busConnectionOf } from '@switchyard/messaging';
import { HealthModule, MetricsModule } from '@switchyard/observability';

@Module({})
export class AdminModule {
  static forRoot(env: AdminEnv): DynamicModule {
    return {
      module: AdminModule,
      imports: [
        DatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE }),
        MessagingModule.forRoot(busConnectionOf(env)),
        MetricsModule.forService('admin'),
        HealthModule.register([DatabaseReadiness, RedisReadiness]),
      ],
    };
  }
}
