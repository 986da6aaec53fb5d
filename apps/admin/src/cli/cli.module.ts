import { Module, type DynamicModule } from '@nestjs/common';
import { type AdminEnv } from '@switchyard/config';
import { DatabaseModule } from '@switchyard/db';
import { MessagingModule, busConnectionOf } from '@switchyard/messaging';
import { ChannelsModule } from '../channels/channels.module.js';
import { AdminEnvModule } from '../common/admin-env.module.js';
import { TokensModule } from '../tokens/tokens.module.js';

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
      ],
    };
  }
}
