import { Module, type DynamicModule } from '@nestjs/common';
import { isTimeZone } from '@switchyard/domain';
import { AuthModule } from '../auth/auth.module.js';
import { BUDGET_TIME_ZONE, BillingController } from './billing.controller.js';
import { BillingRepository } from './billing.repository.js';

/** A key's own view of its spending: one-api's billing routes and `/v1/key/info`. */
@Module({})
export class BillingModule {
  static forRoot(zone: string): DynamicModule {
    if (!isTimeZone(zone))
      throw new Error(
        `BUDGET_TIME_ZONE must be an IANA time zone (UTC, Europe/Berlin), not ${zone}.`,
      );
    return {
      module: BillingModule,
      imports: [AuthModule],
      controllers: [BillingController],
      providers: [BillingRepository, { provide: BUDGET_TIME_ZONE, useValue: zone }],
    };
  }
}
