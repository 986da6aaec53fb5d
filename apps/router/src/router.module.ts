import { Module, type DynamicModule } from '@nestjs/common';
import { type RouterEnv } from '@switchyard/config';
import { DatabaseModule, DatabaseReadiness } from '@switchyard/db';
import { MessagingModule, RedisReadiness, busConnectionOf } from '@switchyard/messaging';
import { HealthModule, MetricsModule } from '@switchyard/observability';

@Module({})
export class RouterModule {
  static forRoot(env: RouterEnv): DynamicModule {
    return {
      module: RouterModule,
      imports: [
        DatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE }),
        MessagingModule.forRoot(busConnectionOf(env)),
        MetricsModule.forService('router'),
        HealthModule.register([DatabaseReadiness, RedisReadiness]),
      ],
    };
  }
}
