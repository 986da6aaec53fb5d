import { Injectable } from '@nestjs/common';
import { ApiError } from '@switchyard/contracts';
import { TokensRepository } from '@switchyard/gateway-store';
import { skipTake, type Page } from '@switchyard/service';
import { AuditService } from '../audit/audit.service.js';
import { type Actor } from '../common/actor.js';
import { ChangeEvents } from '../events/change-events.js';
import {
  type RequestLogDetail,
  type RequestLogQuery,
  type RequestLogSettings,
  type RequestLogSummary,
} from './request-log.dto.js';
import {
  RequestLogRepository,
  type RequestLogDetailRow,
  type RequestLogRow,
} from './request-log.repository.js';

/**
 * The request log (docs/operations.md, "Request log"): bodies of the requests of tokens and
 * teams an administrator turned it on for. Bodies are what users sent and were answered,
 * so only owners and administrators read them (viewers see usage, never bodies), and each
 * opened entry is written to the audit log.
 */
@Injectable()
export class RequestLogService {
  constructor(
    private readonly log: RequestLogRepository,
    private readonly tokens: TokensRepository,
    private readonly audit: AuditService,
    private readonly events: ChangeEvents,
  ) {}

  async list(query: RequestLogQuery): Promise<Page<RequestLogSummary>> {
    const { rows, total } = await this.log.listNewestFirst(
      {
        ...(query.tokenId ? { tokenId: query.tokenId } : {}),
        ...(query.teamId ? { teamId: query.teamId } : {}),
      },
      skipTake(query),
    );
    return { items: rows.map(toSummary), total };
  }

  async get(actor: Actor, requestId: string): Promise<RequestLogDetail> {
    if (requestId.length > 64) throw notFound(requestId.slice(0, 64));
    const row = await this.log.find(requestId);
    if (!row) throw notFound(requestId);
    await this.audit.record({
      actor,
      action: 'request_log.read',
      target: { type: 'request', id: requestId },
      details: { tokenId: row.tokenId },
    });
    return toDetail(row);
  }

  async settings(): Promise<RequestLogSettings> {
    const [tokens, teams] = await Promise.all([this.log.loggedTokens(), this.log.loggedTeams()]);
    return { tokens, teams };
  }

  async setToken(actor: Actor, id: number, enabled: boolean): Promise<RequestLogSettings> {
    const changed = await this.log.transaction(async (db) => {
      const result = await this.tokens.setRequestLog(db, id, enabled);
      if (!result) throw new ApiError('not_found', `No token with id ${id}`);
      if (result.before !== enabled) {
        await this.audit.record(
          {
            actor,
            action: enabled ? 'token.request_log_on' : 'token.request_log_off',
            target: { type: 'token', id },
          },
          db,
        );
      }
      return result;
    });
    // The edges read the flag with the token: they drop their cached copy now.
    await this.events.tokenChanged(id, changed.keyHash, 'updated');
    return this.settings();
  }

  async setTeam(actor: Actor, id: number, enabled: boolean): Promise<RequestLogSettings> {
    const changed = await this.log.transaction(async (db) => {
      const result = await this.log.setTeamFlag(db, id, enabled);
      if (!result) throw new ApiError('not_found', `No team with id ${id}`);
      if (result.before !== enabled) {
        await this.audit.record(
          {
            actor,
            action: enabled ? 'team.request_log_on' : 'team.request_log_off',
            target: { type: 'team', id },
          },
          db,
        );
      }
      return result;
    });
    for (const token of changed.tokens) {
      await this.events.tokenChanged(token.id, token.keyHash, 'updated');
    }
    return this.settings();
  }
}

function notFound(requestId: string): ApiError {
  return new ApiError('not_found', `No request log entry for request ${requestId}`);
}

function toSummary(row: RequestLogRow): RequestLogSummary {
  return {
    requestId: row.requestId,
    tokenId: row.tokenId,
    tokenName: row.tokenName,
    endpoint: row.endpoint,
    model: row.model,
    status: row.status,
    traceId: row.traceId,
    requestChars: row.requestChars,
    responseChars: row.responseChars,
    requestTruncated: row.requestTruncated,
    responseTruncated: row.responseTruncated,
    requestedAt: row.requestedAt,
  };
}

function toDetail(row: RequestLogDetailRow): RequestLogDetail {
  return {
    ...toSummary(row),
    requestBody: row.requestBody,
    responseBody: row.responseBody,
    usage:
      row.latencyMs === null
        ? null
        : {
            channelId: row.usageChannelId,
            upstreamModel: row.upstreamModel,
            promptTokens: row.promptTokens ?? 0,
            completionTokens: row.completionTokens ?? 0,
            cost: Number(row.cost ?? 0n),
            latencyMs: row.latencyMs,
            firstByteMs: row.firstByteMs,
            attempts: row.attempts ?? 1,
            errorCode: row.errorCode,
          },
  };
}
