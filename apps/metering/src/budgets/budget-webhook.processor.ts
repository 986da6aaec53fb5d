import { Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import { MeteringEnv } from '@switchyard/config';
import { BUDGET_WEBHOOK_JOB_NAME, BudgetAlert, Queues } from '@switchyard/contracts';
import { dispatchJob, payloadValidator, type JobHandlers } from '@switchyard/messaging';
import { WEBHOOK_SIGNATURE_HEADER, webhookSignature } from '@switchyard/security';
import { UnrecoverableError, type Job } from 'bullmq';

// Delivers soft budget alerts to BUDGET_WEBHOOK_URL: a JSON POST signed with
// BUDGET_WEBHOOK_SECRET (`x-switchyard-signature: sha256=<hex HMAC-SHA256 of the body>`).
// Anything but a 2xx within the timeout fails the attempt, and BullMQ tries again later
// (BUDGET_WEBHOOK_JOB_OPTIONS: exponential back-off), docs/budgets.md, "Alerts".

/** A receiver that does not answer within this is tried again later. */
const DELIVERY_TIMEOUT_MS = 10_000;

@Processor(Queues.BudgetAlerts)
export class BudgetWebhookProcessor extends WorkerHost implements BeforeApplicationShutdown {
  private readonly logger = new Logger(BudgetWebhookProcessor.name);
  private readonly validAlert = payloadValidator(BudgetAlert);
  private readonly handlers: JobHandlers<typeof Queues.BudgetAlerts, void> = {
    [BUDGET_WEBHOOK_JOB_NAME]: (job) => this.deliver(job),
  };

  constructor(private readonly env: MeteringEnv) {
    super();
  }

  process(job: Job): Promise<void> {
    return dispatchJob(Queues.BudgetAlerts, this.handlers, job);
  }

  private async deliver(job: Job): Promise<void> {
    const { BUDGET_WEBHOOK_URL: url, BUDGET_WEBHOOK_SECRET: secret } = this.env;
    if (url === undefined || secret === undefined) {
      throw new UnrecoverableError('BUDGET_WEBHOOK_URL is no longer set');
    }
    let alert: BudgetAlert;
    try {
      alert = this.validAlert(job.data);
    } catch (error) {
      throw new UnrecoverableError(`invalid budget alert: ${(error as Error).message}`);
    }
    const body = JSON.stringify(alert);
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [WEBHOOK_SIGNATURE_HEADER]: webhookSignature(secret, body),
      },
      body,
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    await response.arrayBuffer().catch(() => undefined);
    if (!response.ok) throw new Error(`the budget webhook answered ${response.status}`);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.worker.close();
  }

  @OnWorkerEvent('failed')
  onFailed(job: Job | undefined, error: Error): void {
    this.logger.warn({
      message: 'budget alert webhook not delivered; retried with back-off',
      jobId: job?.id,
      attempts: job?.attemptsMade,
      reason: error.message,
    });
  }
}
