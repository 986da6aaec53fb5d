import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { CreditPlansService } from './credit-plans.service.js';
import { CreditsClock } from './credits.clock.js';

// Tops plans up at their period boundaries (docs/credits.md, "Plans"). Every chat process
// runs it; each period is topped up once however many do (CreditPlansRepository.topUp).

/** How often it looks: a top-up lands at most this long after its boundary. */
const RUN_EVERY_MS = 60_000;

@Injectable()
export class CreditPlanScheduler implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(CreditPlanScheduler.name);
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly plans: CreditPlansService,
    private readonly clock: CreditsClock,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.tick(), RUN_EVERY_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    try {
      const toppedUp = await this.plans.runDue(this.clock.now());
      if (toppedUp > 0) this.logger.log({ message: 'plans topped up', toppedUp });
    } catch (error) {
      this.logger.error({ message: 'plan top-ups failed', err: error });
    }
  }
}
