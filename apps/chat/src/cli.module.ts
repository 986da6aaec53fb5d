import { Module, type DynamicModule } from '@nestjs/common';
import { type ChatEnv } from '@switchyard/config';
import { DatabaseModule } from '@switchyard/db';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { CoreModule } from './common/core.module.js';
import { ModelsModule } from './models/models.module.js';
import { ChatSettingsModule } from './settings/chat-settings.module.js';

/** What the command line needs: records, models, settings and the edition rules, over Postgres only. */
@Module({})
export class CliModule {
  static forRoot(env: ChatEnv): DynamicModule {
    return {
      module: CliModule,
      imports: [
        DatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: 2 }),
        CoreModule.forRoot(env),
        ApiKeysModule,
        ModelsModule,
        ChatSettingsModule,
      ],
    };
  }
}
