import { Module, type DynamicModule } from '@nestjs/common';
import { type EdgeEnv } from '@switchyard/config';
import { DatabaseModule, DatabaseReadiness } from '@switchyard/db';
import { MessagingModule, RedisReadiness, busConnectionOf } from '@switchyard/messaging';
import { HealthModule, MetricsModule } from '@switchyard/observability';

@Module({})
export class EdgeModule {
  static forRoot(env: EdgeEnv): DynamicModule {
    return {
      module: EdgeModule,
      imports: [
        DatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE }),
        MessagingModule.forRoot(busConnectionOf(env)),
        MetricsModule.forService('edge'),
        HealthModule.register([DatabaseReadiness, RedisReadiness]),
      ],
    };
  }
}
