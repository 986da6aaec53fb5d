import { Module, type DynamicModule } from '@nestjs/common';
import { type ChatEnv } from '@switchyard/config';
import { DatabaseModule, DatabaseReadiness } from '@switchyard/db';
import { MessagingModule, RedisReadiness, busConnectionOf } from '@switchyard/messaging';
import { HealthModule, MetricsModule } from '@switchyard/observability';

@Module({})
export class ChatModule {
  static forRoot(env: ChatEnv): DynamicModule {
    return {
      module: ChatModule,
      imports: [
        DatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE }),
        MessagingModule.forRoot(busConnectionOf(env)),
        MetricsModule.forService('chat'),
        HealthModule.register([DatabaseReadiness, RedisReadiness]),
      ],
    };
  }
}
