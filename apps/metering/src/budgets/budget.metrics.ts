import { Inject, Injectable, Logger } from '@nestjs/common';
import { MeteringEnv } from '@switchyard/config';
import { levelOfSubject, periodSpan } from '@switchyard/domain';
import { type BudgetUse } from '@switchyard/gateway-store';
import { Gauge, readWithin, Registry } from '@switchyard/observability';
import { BudgetUseRepository } from './budget-use.repository.js';

// How full the budgets are (docs/budgets.md, "Metrics"): what each budget's current period
// has spent, as a share of its amount, and its soft threshold, read from Postgres when
// scraped (`BudgetSpend` is the store of record, and metering its only writer), as the chat
// app reads its active users. Every replica reports every budget: take the max across
// replicas, not the sum.

/**
 * Only the fullest budgets are exported, so the series stay bounded however many budgets
 * there are (one per token is allowed): the alerts and the dashboard ask about the budgets
 * near their cap, and a budget that falls out of this set is far from its.
 */
export const EXPORTED_BUDGETS = 100;
/** A scrape waits this long for Postgres, then answers with the last values read. */
const READ_TIMEOUT_MS = 2_000;

@Injectable()
export class BudgetMetrics {
  private readonly logger = new Logger(BudgetMetrics.name);
  private readonly zone: string;
  /** The read in progress: one scrape reads Postgres once for both gauges. */
  private reading: Promise<void> | undefined;
  private readonly spentRatio: Gauge<'level' | 'subject' | 'period'>;
  private readonly softRatio: Gauge<'level' | 'subject' | 'period'>;

  constructor(
    @Inject(Registry) registry: Registry,
    private readonly budgets: BudgetUseRepository,
    env: MeteringEnv,
  ) {
    this.zone = env.BUDGET_TIME_ZONE;
    const collect = () => this.read();
    this.spentRatio = new Gauge({
      name: 'gateway_budget_spent_ratio',
      help: `Spend of the current period over the budget's amount (1 = at its cap), for the ${EXPORTED_BUDGETS} fullest budgets; read from Postgres at scrape.`,
      labelNames: ['level', 'subject', 'period'],
      registers: [registry],
      collect,
    });
    this.softRatio = new Gauge({
      name: 'gateway_budget_soft_ratio',
      help: "A budget's soft threshold as a share of its amount (softPercent / 100), for the exported budgets that have one.",
      labelNames: ['level', 'subject', 'period'],
      registers: [registry],
      collect,
    });
  }

  private readFullest(now: Date): Promise<BudgetUse[]> {
    return this.budgets.fullest(
      {
        day: periodSpan('day', now, this.zone).start,
        week: periodSpan('week', now, this.zone).start,
        month: periodSpan('month', now, this.zone).start,
      },
      EXPORTED_BUDGETS,
    );
  }

  private read(): Promise<void> {
    this.reading ??= this.readBudgets().finally(() => (this.reading = undefined));
    return this.reading;
  }

  /** The last values stay when Postgres does not answer in time. */
  private async readBudgets(): Promise<void> {
    const now = new Date();
    let budgets: BudgetUse[];
    try {
      budgets = await readWithin(this.readFullest(now), READ_TIMEOUT_MS, 'Postgres');
    } catch (error) {
      this.logger.warn({ message: 'budget spend not read', reason: (error as Error).message });
      return;
    }
    // A budget deleted, or no longer among the fullest, loses its series.
    this.spentRatio.reset();
    this.softRatio.reset();
    for (const budget of budgets) {
      const labels = {
        level: levelOfSubject(budget.subject),
        subject: budget.subject,
        period: budget.period,
      };
      this.spentRatio.set(labels, Number(budget.spent) / Number(budget.amount));
      if (budget.softPercent !== null) this.softRatio.set(labels, budget.softPercent / 100);
    }
  }
}
