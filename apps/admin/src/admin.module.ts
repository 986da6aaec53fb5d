import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { type AdminEnv } from '@switchyard/config';
import { DatabaseModule, DatabaseReadiness } from '@switchyard/db';
import { MessagingModule, RedisReadiness, busConnectionOf } from '@switchyard/messaging';
import { HealthModule, MetricsModule } from '@switchyard/observability';
import { apiValidationPipe } from '@switchyard/service';
import { AdminsModule } from './admins/admins.module.js';
import { AuditModule } from './audit/audit.module.js';
import { AuthModule } from './auth/auth.module.js';
import { BalancesModule } from './balances/balances.module.js';
import { BudgetsModule } from './budgets/budgets.module.js';
import { ChannelsModule } from './channels/channels.module.js';
import { AdminEnvModule } from './common/admin-env.module.js';
import { AdminExceptionFilter } from './common/admin-exception.filter.js';
import { ModelFallbacksModule } from './model-fallbacks/model-fallbacks.module.js';
import { MyModule } from './my/my.module.js';
import { OverviewModule } from './overview/overview.module.js';
import { PriceGroupsModule } from './price-groups/price-groups.module.js';
import { PricesModule } from './prices/prices.module.js';
import { RedemptionModule } from './redemption/redemption.module.js';
import { TeamsModule } from './teams/teams.module.js';
import { RequestLogModule } from './request-log/request-log.module.js';
import { TokensModule } from './tokens/tokens.module.js';
import { UsageModule } from './usage/usage.module.js';

@Module({})
export class AdminModule {
  static forRoot(env: AdminEnv): DynamicModule {
    return {
      module: AdminModule,
      imports: [
        AdminEnvModule.forRoot(env),
        DatabaseModule.forRoot({
          url: env.DATABASE_URL,
          poolSize: env.DATABASE_POOL_SIZE,
          readUrl: env.DATABASE_READ_URL,
        }),
        MessagingModule.forRoot(busConnectionOf(env)),
        MetricsModule.forService('admin'),
        HealthModule.register([DatabaseReadiness, RedisReadiness]),
        AuthModule,
        AdminsModule,
        AuditModule,
        ChannelsModule,
        TokensModule,
        PricesModule,
        ModelFallbacksModule,
        UsageModule,
        RequestLogModule,
        OverviewModule,
        TeamsModule,
        BudgetsModule,
        BalancesModule,
        PriceGroupsModule,
        RedemptionModule,
        MyModule,
      ],
      providers: [
        { provide: APP_PIPE, useFactory: apiValidationPipe },
        { provide: APP_FILTER, useClass: AdminExceptionFilter },
      ],
    };
  }
}
