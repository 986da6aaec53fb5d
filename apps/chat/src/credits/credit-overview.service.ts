import { Injectable } from '@nestjs/common';
import { dayKey, period } from '../usage/usage-day.js';
import { CreditOverviewRepository } from './credit-overview.repository.js';
import {
  type CreditDayResponse,
  type CreditModelSpendResponse,
  type CreditOverviewResponse,
  type CreditSpendResponse,
} from './credits.dto.js';
import { type ModelSpendSum } from './credit-overview.repository.js';

const emptyDay = (day: string): CreditDayResponse => ({
  day,
  grant: 0,
  redeem: 0,
  invite: 0,
  plan: 0,
  adjust: 0,
  granted: 0,
  spent: 0,
});

function mostFirst(models: ModelSpendSum[]): CreditModelSpendResponse[] {
  return models
    .filter((row) => row.spent !== 0)
    .sort((a, b) => b.spent - a.spent || (a.model ?? '').localeCompare(b.model ?? ''));
}

/** Credits granted and spent per UTC day, and spent per model, for the admin overview. */
@Injectable()
export class CreditOverviewService {
  constructor(private readonly overview: CreditOverviewRepository) {}

  async overviewOf(days: number, now = new Date()): Promise<CreditOverviewResponse> {
    const { first, keys } = period(days, now);
    const [sums, models] = await Promise.all([
      this.overview.daysSince(first),
      this.overview.spendByModelSince(first),
    ]);
    const byDay = new Map(keys.map((day) => [day, emptyDay(day)]));
    for (const sum of sums) {
      const day = byDay.get(dayKey(sum.day));
      if (!day) continue;
      if (sum.kind === 'spend' || sum.kind === 'refund') {
        day.spent -= sum.amount;
      } else {
        day[sum.kind] += sum.amount;
        day.granted += sum.amount;
      }
    }
    const items = [...byDay.values()];
    return { items, total: items.length, models: mostFirst(models) };
  }

  /** One user's spend per model over the last `days` UTC days (their Credits page). */
  async spendOf(userId: number, days: number, now = new Date()): Promise<CreditSpendResponse> {
    const { first } = period(days, now);
    return { days, models: mostFirst(await this.overview.spendByModelSince(first, userId)) };
  }
}
