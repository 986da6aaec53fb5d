import { Injectable } from '@nestjs/common';
import { type AuditLog, type Prisma } from '@switchyard/db';
import { type Actor } from '../common/actor.js';
import { type Db } from '../common/db.js';
import { skipTake, type Page } from '../common/pagination.js';
import { toDate } from '../common/validators.js';
import { AuditRepository } from './audit.repository.js';
import { type AuditEntryResponse, type AuditQuery } from './audit.dto.js';

export interface AuditTarget {
  type: 'admin' | 'channel' | 'channel_key' | 'token' | 'price' | 'session';
  id?: number | string | null;
}

/** Details of an audit entry: what changed, described without any secret. */
export type AuditDetails = Prisma.InputJsonObject;

export interface AuditEntry {
  actor: Actor;
  /** `<target>.<verb>`, e.g. `channel.update`. */
  action: string;
  target: AuditTarget;
  details?: AuditDetails;
}

@Injectable()
export class AuditService {
  constructor(private readonly audit: AuditRepository) {}

  /**
   * Appends an entry. Pass the transaction of the change as `db` so that the change and
   * its entry are committed together, or neither is.
   */
  async record(entry: AuditEntry, db?: Db): Promise<void> {
    const { actor, action, target, details } = entry;
    await this.audit.append(
      {
        actorId: actor.id,
        actorName: actor.name.slice(0, 64),
        action,
        targetType: target.type,
        targetId: target.id === undefined || target.id === null ? null : String(target.id),
        ...(details ? { details } : {}),
        clientIp: actor.clientIp,
      },
      db,
    );
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
        ? (row.details as Record<string, unknown>)
        : null,
    clientIp: row.clientIp,
    createdAt: row.createdAt,
  };
}
