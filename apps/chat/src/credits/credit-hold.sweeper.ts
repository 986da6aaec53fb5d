import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ChatEnv } from '@switchyard/config';
import { CreditsClock } from './credits.clock.js';
import { CreditsRepository } from './credits.repository.js';

// A reply settles its freeze when it ends (docs/credits.md, "Freeze and settle"). If the
// process dies first, the freeze's hold stays behind; this returns it once it is older than
// any reply can run (CHAT_CREDIT_HOLD_MAX_MS). Ending the hold and writing the refund are one
// transaction that only the first of any concurrent sweepers or a late settlement wins, so
// several chat processes may sweep at once.

/** How often the sweeper looks; a freeze is returned at most this long after its bound. */
export const SWEEP_EVERY_MS = 60_000;
/** Holds returned per look; the next look takes the rest. */
const SWEEP_BATCH = 200;

@Injectable()
export class CreditHoldSweeper implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(CreditHoldSweeper.name);
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly credits: CreditsRepository,
    private readonly env: ChatEnv,
    private readonly clock: CreditsClock,
  ) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.tick(), SWEEP_EVERY_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    try {
      await this.sweep(this.clock.now());
    } catch (error) {
      this.logger.error({ message: 'credit hold sweep failed', err: error });
    }
  }

  /**
   * Returns every freeze made before `now` less the bound and still unsettled; the time is
   * a parameter so that the specs can run it at any moment. Resolves to how many it returned.
   */
  async sweep(now: Date): Promise<number> {
    const cutoff = new Date(now.getTime() - this.env.CHAT_CREDIT_HOLD_MAX_MS);
    let returned = 0;
    for (const hold of await this.credits.staleHolds(cutoff, SWEEP_BATCH)) {
      const done = await this.credits.release(hold.requestId, {
        userId: hold.userId,
        kind: 'refund',
        amount: hold.frozen,
        reason: 'reply never settled: freeze returned',
        requestId: hold.requestId,
        conversationId: hold.conversationId,
      });
      if (done) returned += 1;
    }
    if (returned > 0) this.logger.warn({ message: 'unsettled freezes returned', returned });
    return returned;
  }
}
