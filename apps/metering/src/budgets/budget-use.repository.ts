import { Inject, Injectable } from '@nestjs/common';
import { SQL_POOL, type SqlPool } from '@switchyard/db/sql';
import { BudgetCounters, type BudgetUse } from '@switchyard/gateway-store';

/** The read behind the budget gauges (docs/budgets.md, "Metrics"), on one pooled connection. */
@Injectable()
export class BudgetUseRepository {
  constructor(
    @Inject(SQL_POOL) private readonly pool: SqlPool,
    private readonly counters: BudgetCounters,
  ) {}

  async fullest(
    starts: { day: Date; week: Date; month: Date },
    limit: number,
  ): Promise<BudgetUse[]> {
    const client = await this.pool.connect();
    try {
      return await this.counters.fullest(client, starts, limit);
    } finally {
      client.release();
    }
  }
}
