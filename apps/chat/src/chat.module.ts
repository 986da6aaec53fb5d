import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { type ChatEnv } from '@switchyard/config';
import { DatabaseModule, DatabaseReadiness } from '@switchyard/db';
import { MessagingModule, RedisReadiness, busConnectionOf } from '@switchyard/messaging';
import { HealthModule, MetricsModule } from '@switchyard/observability';
import { ApiExceptionFilter, apiValidationPipe } from '@switchyard/service';
import { A2aModule } from './a2a/a2a.module.js';
import { A2aAgentsModule } from './a2a-agents/a2a-agents.module.js';
import { AttachmentsModule } from './attachments/attachments.module.js';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { AuthModule } from './auth/auth.module.js';
import { SessionGuard } from './auth/session.guard.js';
import { ChatMetricsModule } from './common/chat-metrics.module.js';
import { CoreModule } from './common/core.module.js';
import { CreditsModule } from './credits/credits.module.js';
import { ConversationsModule } from './conversations/conversations.module.js';
import { EditionsModule } from './editions/editions.module.js';
import { McpModule } from './mcp/mcp.module.js';
import { ModelsModule } from './models/models.module.js';
import { PreferencesModule } from './preferences/preferences.module.js';
import { UsageModule } from './usage/usage.module.js';
import { UsersModule } from './users/users.module.js';

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
        CoreModule.forRoot(env),
        ChatMetricsModule,
        AuthModule,
        UsersModule,
        ModelsModule,
        PreferencesModule,
        EditionsModule,
        ApiKeysModule,
        McpModule,
        AttachmentsModule,
        CreditsModule,
        ConversationsModule,
        A2aAgentsModule,
        A2aModule,
        UsageModule,
      ],
      providers: [
        { provide: APP_PIPE, useFactory: apiValidationPipe },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        // Default deny: every /api route needs a session, /api/admin an administrator.
        { provide: APP_GUARD, useExisting: SessionGuard },
      ],
    };
  }
}
