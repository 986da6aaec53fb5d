import { Injectable } from '@nestjs/common';
import { type AuditLog } from '@switchyard/db';
import { AuditRepository, type AuditEntry, type Db } from '@switchyard/gateway-store';
import { skipTake, type Page } from '@switchyard/service';
import { toDate } from '../common/validators.js';
import { type AuditEntryResponse, type AuditQuery } from './audit.dto.js';

@Injectable()
export class AuditService {
  constructor(private readonly audit: AuditRepository) {}

  /**
   * Appends an entry. Pass the transaction of the change as `db` so that the change and
   * its entry are committed together, or neither is.
   */
  record(entry: AuditEntry, db?: Db): Promise<void> {
    return this.audit.append(entry, db);
  }

  async list(query: AuditQuery): Promise<Page<AuditEntryResponse>> {
    const { rows, total } = await this.audit.listNewestFirst(
      {
        ...(query.action ? { action: query.action } : {}),
        ...(query.targetType ? { targetType: query.targetType } : {}),
        ...(query.targetId ? { targetId: query.targetId } : {}),
        ...(query.actorId ? { actorId: query.actorId } : {}),
        ...(query.from ? { from: toDate(query.from) } : {}),
        ...(query.to ? { to: toDate(query.to) } : {}),
      },
      skipTake(query),
    );
    return { items: rows.map(toAuditEntryResponse), total };
  }
}

function toAuditEntryResponse(row: AuditLog): AuditEntryResponse {
  return {
    id: Number(row.id),
    actorId: row.actorId,
    actorName: row.actorName,
    action: row.action,
    targetType: row.targetType,
    targetId: row.targetId,
    details:
      row.details !== null && typeof row.details === 'object' && !Array.isArray(row.details)
        ? row.details
        : null,
    clientIp: row.clientIp,
    createdAt: row.createdAt,
  };
}
