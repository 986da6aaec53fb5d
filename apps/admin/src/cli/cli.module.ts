import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { type AdminEnv } from '@switchyard/config';
import { DatabaseModule } from '@switchyard/db';
import { MessagingModule, REDIS, busConnectionOf, type RedisClient } from '@switchyard/messaging';
import { AdminsService } from '../admins/admins.service.js';
import { AuditModule } from '../audit/audit.module.js';
import { ADMIN_ACCOUNT_PROVIDERS } from '../auth/auth.module.js';
import { ChannelsModule } from '../channels/channels.module.js';
import { AdminEnvModule } from '../common/admin-env.module.js';
import { TokensModule } from '../tokens/tokens.module.js';

/**
 * A command can end before the Redis client has finished connecting; its QUIT is then
 * refused (no offline queue) and the connection would open afterwards and stay. Drop it.
 */
@Injectable()
class RedisDisconnector implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  onApplicationShutdown(): void {
    if (this.redis.status !== 'end') this.redis.disconnect();
  }
}

/** What the command-line tool needs: the same services as the API, without HTTP. */
@Module({})
export class CliModule {
  static forRoot(env: AdminEnv): DynamicModule {
    return {
      module: CliModule,
      imports: [
        AdminEnvModule.forRoot(env),
        DatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: 2 }),
        MessagingModule.forRoot(busConnectionOf(env)),
        ChannelsModule,
        TokensModule,
        AuditModule,
      ],
      // Not the AuthModule: it would make the first administrator at start, a server's job.
      providers: [RedisDisconnector, ...ADMIN_ACCOUNT_PROVIDERS, AdminsService],
    };
  }
}
