import { Injectable, Logger } from '@nestjs/common';
import { MeteringEnv } from '@switchyard/config';
import {
  BUDGET_WEBHOOK_JOB_NAME,
  BUDGET_WEBHOOK_JOB_OPTIONS,
  Queues,
  type BudgetAlert,
} from '@switchyard/contracts';
import { InjectTypedQueue, type TypedQueue } from '@switchyard/messaging';

// Soft alerts fired by a settlement (budget-spend.ts) go to the webhook through a queue, so
// a receiver that is slow or down delays no settlement and loses no alert: the queue
// retries with exponential back-off (docs/budgets.md, "Alerts"). The audit entry was
// written in the settlement's transaction; this only delivers.

/** Attempts to add an alert's job while Redis does not take it, a second apart. */
const ENQUEUE_ATTEMPTS = 5;

@Injectable()
export class BudgetAlerts {
  private readonly logger = new Logger(BudgetAlerts.name);
  private readonly webhook: boolean;

  constructor(
    @InjectTypedQueue(Queues.BudgetAlerts)
    private readonly queue: TypedQueue<typeof Queues.BudgetAlerts>,
    env: MeteringEnv,
  ) {
    this.webhook = env.BUDGET_WEBHOOK_URL !== undefined;
  }

  /** Logs each alert and queues its webhook; returns at once. */
  send(alerts: BudgetAlert[]): void {
    for (const alert of alerts) {
      this.logger.log({
        message: 'budget reached its soft threshold',
        subject: alert.subject,
        spent: alert.spent,
        amount: alert.amount,
        periodStart: alert.periodStart,
      });
      if (this.webhook) void this.enqueue(alert);
    }
  }

  private async enqueue(alert: BudgetAlert): Promise<void> {
    // One job per budget and period: a job id BullMQ will not add twice.
    const jobId = `budget-${alert.budgetId}-${Date.parse(alert.periodStart)}`;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.queue.add(BUDGET_WEBHOOK_JOB_NAME, alert, {
          ...BUDGET_WEBHOOK_JOB_OPTIONS,
          jobId,
        });
        return;
      } catch (error) {
        if (attempt >= ENQUEUE_ATTEMPTS) {
          this.logger.error({
            message: 'could not queue a budget alert webhook (the alert is in the audit log)',
            subject: alert.subject,
            reason: error instanceof Error ? error.message : String(error),
          });
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 1_000).unref());
      }
    }
  }
}
