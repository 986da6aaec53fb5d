import { Module, type DynamicModule } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { MeteringEnv } from '@switchyard/config';
import { Queues } from '@switchyard/contracts';
import { DatabaseModule, DatabaseReadiness } from '@switchyard/db';
import { SqlDatabaseModule } from '@switchyard/db/sql';
import { GatewayStoreModule } from '@switchyard/gateway-store';
import { PriceCacheModule } from '@switchyard/gateway-store/prices';
import {
  MessagingModule,
  QueueConnection,
  REDIS,
  RedisReadiness,
  busConnectionOf,
  type RedisClient,
} from '@switchyard/messaging';
import { SpendLedger } from '@switchyard/spend';
import { HealthModule, MetricsModule } from '@switchyard/observability';
import { BudgetAlerts } from './budgets/budget-alerts.js';
import { BudgetMetrics } from './budgets/budget.metrics.js';
import { BudgetUseRepository } from './budgets/budget-use.repository.js';
import { BudgetSpend } from './budgets/budget-spend.js';
import { BudgetWebhookProcessor } from './budgets/budget-webhook.processor.js';
import { MaintenanceProcessor } from './maintenance/maintenance.processor.js';
import { MaintenanceRepository } from './maintenance/maintenance.repository.js';
import { MaintenanceService } from './maintenance/maintenance.service.js';
import { PriceBook } from './pricing/price-book.js';
import { RequestLogProcessor } from './request-log/request-log.processor.js';
import { RequestLogRepository } from './request-log/request-log.repository.js';
import { TokenCounter } from '@switchyard/providers';
import { UsageEntryFactory } from './usage/usage-entry.js';
import { UsageSettlement } from './usage/usage-settlement.service.js';
import { UsageMetrics } from './usage/usage.metrics.js';
import { UsageProcessor } from './usage/usage.processor.js';
import { UsageRepository } from './usage/usage.repository.js';

@Module({})
export class MeteringModule {
  static forRoot(env: MeteringEnv): DynamicModule {
    return {
      module: MeteringModule,
      imports: [
        DatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE }),
        // Settlements and prices take plain SQL (usage.repository.ts, PriceCacheModule); maintenance, Prisma.
        SqlDatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE }),
        GatewayStoreModule,
        PriceCacheModule,
        MessagingModule.forRoot(busConnectionOf(env)),
        MetricsModule.forService('metering'),
        HealthModule.register([DatabaseReadiness, RedisReadiness]),
        BullModule.forRootAsync({
          inject: [QueueConnection],
          useFactory: (queues: QueueConnection) => ({
            connection: queues.connectionOptions(),
            prefix: queues.prefix,
          }),
        }),
        BullModule.registerQueue(
          { name: Queues.Usage },
          { name: Queues.UsageMaintenance },
          { name: Queues.BudgetAlerts },
          { name: Queues.RequestLog },
        ),
      ],
      providers: [
        { provide: MeteringEnv, useValue: env },
        PriceBook,
        TokenCounter,
        UsageEntryFactory,
        UsageRepository,
        UsageMetrics,
        {
          provide: SpendLedger,
          useFactory: (redis: RedisClient) => new SpendLedger(redis),
          inject: [REDIS],
        },
        BudgetSpend,
        BudgetAlerts,
        BudgetMetrics,
        BudgetUseRepository,
        BudgetWebhookProcessor,
        UsageSettlement,
        UsageProcessor,
        MaintenanceRepository,
        MaintenanceService,
        MaintenanceProcessor,
        RequestLogRepository,
        RequestLogProcessor,
      ],
    };
  }
}
