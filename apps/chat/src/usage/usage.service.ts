import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { type Principal } from '../auth/principal.js';
import { type UsageResponse } from '../users/users.dto.js';
import { toUsage } from '../users/users.mapper.js';
import { UsersRepository } from '../users/users.repository.js';
import { DAY_MS, dayKey, utcDay } from './usage-day.js';
import { type UsageDaysResponse } from './usage.dto.js';
import { UsageRepository } from './usage.repository.js';

@Injectable()
export class UsageService {
  constructor(
    private readonly users: UsersRepository,
    private readonly usage: UsageRepository,
  ) {}

  async totals(principal: Principal): Promise<UsageResponse> {
    const user = await this.users.findById(principal.id);
    if (!user) throw new ApiError('unauthenticated', 'Sign in again');
    return toUsage(user);
  }

  /** The last `days` UTC days, today included, each one present (zero when unused). */
  async daily(principal: Principal, days: number, now = new Date()): Promise<UsageDaysResponse> {
    const today = utcDay(now);
    const first = new Date(today.getTime() - (days - 1) * DAY_MS);
    const used = new Map(
      (await this.usage.daysSince(principal.id, first)).map((row) => [dayKey(row.day), row]),
    );
    const items = Array.from({ length: days }, (_, index) => {
      const day = dayKey(new Date(first.getTime() + index * DAY_MS));
      const row = used.get(day);
      const promptTokens = Number(row?.promptTokens ?? 0);
      const completionTokens = Number(row?.completionTokens ?? 0);
      return {
        day,
        requests: row?.requests ?? 0,
        promptTokens,
        completionTokens,
        totalTokens: promptTokens + completionTokens,
      };
    });
    return { items, total: items.length };
  }
}
