import { Global, Module, type DynamicModule } from '@nestjs/common';
import { Clock } from './clock.js';

/** The zone whose midnights start budget periods (BUDGET_TIME_ZONE). */
export const BUDGET_TIME_ZONE = Symbol('BUDGET_TIME_ZONE');

/** Time for budgets, shared by the steps of the hot path that need it. */
@Global()
@Module({})
export class BudgetsModule {
  static forRoot(options: { timeZone: string; clockFile?: string }): DynamicModule {
    return {
      module: BudgetsModule,
      providers: [
        { provide: Clock, useValue: new Clock(options.clockFile) },
        { provide: BUDGET_TIME_ZONE, useValue: options.timeZone },
      ],
      exports: [Clock, BUDGET_TIME_ZONE],
    };
  }
}
