import { Module, type DynamicModule } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { MeteringEnv } from '@switchyard/config';
import { Queues } from '@switchyard/contracts';
import { DatabaseModule, DatabaseReadiness } from '@switchyard/db';
import { SqlDatabaseModule } from '@switchyard/db/sql';
import { GatewayStoreModule } from '@switchyard/gateway-store';
import {
  MessagingModule,
  QueueConnection,
  RedisReadiness,
  busConnectionOf,
} from '@switchyard/messaging';
import { HealthModule, MetricsModule } from '@switchyard/observability';
import { MaintenanceProcessor } from './maintenance/maintenance.processor.js';
import { MaintenanceRepository } from './maintenance/maintenance.repository.js';
import { MaintenanceService } from './maintenance/maintenance.service.js';
import { PriceBook } from './pricing/price-book.js';
import { PriceEventsController } from './pricing/price-events.controller.js';
import { PricingRepository } from './pricing/pricing.repository.js';
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
        // Settlements take plain SQL (usage.repository.ts); prices and maintenance, Prisma.
        SqlDatabaseModule.forRoot({ url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE }),
        GatewayStoreModule,
        MessagingModule.forRoot(busConnectionOf(env)),
        MetricsModule.forService('metering'),
        HealthModule.register([DatabaseReadiness, RedisReadiness]),
        BullModule.forRootAsync({
          inject: [QueueConnection],
          useFactory: (queues: QueueConnection) => ({
            connection: { url: queues.url },
            prefix: queues.prefix,
          }),
        }),
        BullModule.registerQueue({ name: Queues.Usage }, { name: Queues.UsageMaintenance }),
      ],
      controllers: [PriceEventsController],
      providers: [
        { provide: MeteringEnv, useValue: env },
        PricingRepository,
        PriceBook,
        TokenCounter,
        UsageEntryFactory,
        UsageRepository,
        UsageMetrics,
        UsageSettlement,
        UsageProcessor,
        MaintenanceRepository,
        MaintenanceService,
        MaintenanceProcessor,
      ],
    };
  }
}
