import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { skipTake } from '@switchyard/service';
import { toDate } from '../common/validators.js';
import { type UsageTotalsRow } from './usage-aggregate.js';
import { UsageRepository, type UsageLogWithNames } from './usage.repository.js';
import {
  type UsageGroup,
  type UsageLogPage,
  type UsageLogResponse,
  type UsageLogsQuery,
  type UsageSummaryQuery,
  type UsageSummaryResponse,
  type UsageTotals,
} from './usage.dto.js';

const DEFAULT_SUMMARY_DAYS = 30;

/** Reads what the metering worker recorded. */
@Injectable()
export class UsageService {
  constructor(private readonly usage: UsageRepository) {}

  /** `scope` narrows further whatever the query says (a member's own team and tokens). */
  async logs(
    query: UsageLogsQuery,
    scope: { teamId?: number; ownerId?: number } = {},
  ): Promise<UsageLogPage> {
    const from = toDate(query.from);
    const to = toDate(query.to);
    assertRange(from, to);
    const { rows, total, totalCapped } = await this.usage.listNewestFirst(
      {
        ...(query.tokenId ? { tokenId: query.tokenId } : {}),
        ...(query.channelId ? { channelId: query.channelId } : {}),
        ...(query.teamId ? { teamId: query.teamId } : {}),
        ...(query.model ? { model: query.model } : {}),
        ...(query.status ? { status: query.status } : {}),
        ...(from ? { from } : {}),
        ...(to ? { to } : {}),
        ...scope,
      },
      skipTake(query),
    );
    return { items: rows.map(toUsageLogResponse), total, totalCapped };
  }

  async summary(query: UsageSummaryQuery): Promise<UsageSummaryResponse> {
    const to = toDate(query.to) ?? new Date();
    const from = toDate(query.from) ?? new Date(to.getTime() - DEFAULT_SUMMARY_DAYS * 86_400_000);
    assertRange(from, to);
    const rows = await this.usage.summarize(query.groupBy, {
      from,
      to,
      ...(query.tokenId ? { tokenId: query.tokenId } : {}),
      ...(query.channelId ? { channelId: query.channelId } : {}),
      ...(query.teamId ? { teamId: query.teamId } : {}),
    });
    const items = rows.map(toUsageGroup);
    const totals: UsageTotals = {
      requests: 0,
      failures: 0,
      promptTokens: 0,
      completionTokens: 0,
      cost: 0,
    };
    for (const item of items) {
      totals.requests += item.requests;
      totals.failures += item.failures;
      totals.promptTokens += item.promptTokens;
      totals.completionTokens += item.completionTokens;
      totals.cost += item.cost;
    }
    return { groupBy: query.groupBy, from, to, items, totals };
  }
}

function assertRange(from: Date | undefined, to: Date | undefined): void {
  if (from && to && from >= to) {
    const message = 'from must be before to';
    throw new ApiError('validation_failed', message, [{ field: 'from', message }]);
  }
}

function toUsageGroup(row: UsageTotalsRow): UsageGroup {
  return {
    key: row.key,
    label: row.label,
    requests: Number(row.requests),
    failures: Number(row.failures),
    promptTokens: Number(row.promptTokens),
    completionTokens: Number(row.completionTokens),
    cost: Number(row.cost),
  };
}

function toUsageLogResponse(row: UsageLogWithNames): UsageLogResponse {
  return {
    id: Number(row.id),
    requestId: row.requestId,
    tokenId: row.tokenId,
    tokenName: row.token?.name ?? null,
    channelId: row.channelId,
    channelName: row.channel?.name ?? null,
    channelKeyId: row.channelKeyId,
    teamId: row.teamId,
    endpoint: row.endpoint,
    model: row.model,
    requestedModel: row.requestedModel,
    upstreamModel: row.upstreamModel,
    promptTokens: row.promptTokens,
    completionTokens: row.completionTokens,
    tokensCounted: row.tokensCounted,
    cost: Number(row.cost),
    status: row.status,
    errorCode: row.errorCode,
    latencyMs: row.latencyMs,
    firstByteMs: row.firstByteMs,
    stream: row.stream,
    attempts: row.attempts,
    clientIp: row.clientIp,
    requestedAt: row.requestedAt,
  };
}
