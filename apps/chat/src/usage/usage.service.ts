import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { type Principal } from '../auth/principal.js';
import { type UsageResponse } from '../users/users.dto.js';
import { toUsage } from '../users/users.mapper.js';
import { UsersRepository } from '../users/users.repository.js';
import { dayKey, period } from './usage-day.js';
import {
  TOP_MODELS,
  type AdminUsageResponse,
  type UsageDaysResponse,
  type UsageModelResponse,
} from './usage.dto.js';
import { UsageRepository, type ModelUsageSums, type UsageSums } from './usage.repository.js';

const toCounts = (sums: UsageSums | undefined) => {
  const promptTokens = Number(sums?.promptTokens ?? 0);
  const completionTokens = Number(sums?.completionTokens ?? 0);
  return {
    requests: sums?.requests ?? 0,
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
  };
};

/** Most tokens first; the name breaks ties so the order is stable. */
const byModel = (sums: ModelUsageSums[]): UsageModelResponse[] =>
  sums
    .map((row) => ({ model: row.model, ...toCounts(row) }))
    .sort((a, b) => b.totalTokens - a.totalTokens || a.model.localeCompare(b.model));

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
    const { first, keys } = period(days, now);
    const [rows, models] = await Promise.all([
      this.usage.daysSince(principal.id, first),
      this.usage.modelsSince(first, principal.id),
    ]);
    const used = new Map(rows.map((row) => [dayKey(row.day), row]));
    const items = keys.map((day) => ({ day, ...toCounts(used.get(day)) }));
    return { items, total: items.length, models: byModel(models) };
  }

  /** Every user's usage over the last `days` UTC days, for the administrators' overview. */
  async everyone(days: number, now = new Date()): Promise<AdminUsageResponse> {
    const { first, keys } = period(days, now);
    const [rows, models, users] = await Promise.all([
      this.usage.everyoneDaysSince(first),
      this.usage.modelsSince(first),
      this.usage.usersSince(first),
    ]);
    const used = new Map(rows.map((row) => [dayKey(row.day), row]));
    const items = keys.map((day) => ({
      day,
      users: used.get(day)?.users ?? 0,
      ...toCounts(used.get(day)),
    }));
    return { items, total: items.length, users, models: byModel(models).slice(0, TOP_MODELS) };
  }
}
