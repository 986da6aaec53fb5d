import { Injectable } from '@nestjs/common';
import { PrismaService, type AuditLog, type Prisma } from '@switchyard/db';
import { type Actor } from './actor.js';
import { type Db } from './db.js';

export interface AuditTarget {
  type:
    | 'admin'
    | 'channel'
    | 'channel_key'
    | 'token'
    | 'price'
    | 'model_fallback'
    | 'session'
    | 'team'
    | 'request'
    | 'budget'
    | 'price_group'
    | 'redemption_batch';
  id?: number | string | null;
}

/** Details of an audit entry: what changed, described without any secret. */
export type AuditDetails = Prisma.InputJsonObject;

/** An audit entry always names its actor: the trail says who did it, or which service. */
export interface AuditEntry {
  actor: Actor;
  /** `<target>.<verb>`, e.g. `channel.update`. */
  action: string;
  target: AuditTarget;
  details?: AuditDetails;
}

export interface AuditFilter {
  action?: string;
  targetType?: string;
  targetId?: string;
  actorId?: number;
  from?: Date;
  to?: Date;
}

@Injectable()
export class AuditRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Appends an entry. Pass the transaction of the change as `db` so that the change and
   * its entry are committed together, or neither is.
   */
  async append(entry: AuditEntry, db: Db = this.prisma): Promise<void> {
    const { actor, action, target, details } = entry;
    await db.auditLog.create({
      data: {
        actorId: actor.id,
        actorName: actor.name.slice(0, 64),
        action,
        targetType: target.type,
        targetId: target.id === undefined || target.id === null ? null : String(target.id),
        ...(details ? { details } : {}),
        clientIp: actor.clientIp,
      },
    });
  }

  async listNewestFirst(
    filter: AuditFilter,
    page: { skip: number; take: number },
  ): Promise<{ rows: AuditLog[]; total: number }> {
    const where: Prisma.AuditLogWhereInput = {
      ...(filter.action ? { action: filter.action } : {}),
      ...(filter.targetType ? { targetType: filter.targetType } : {}),
      ...(filter.targetId ? { targetId: filter.targetId } : {}),
      ...(filter.actorId ? { actorId: filter.actorId } : {}),
      ...(filter.from || filter.to
        ? {
            createdAt: {
              ...(filter.from ? { gte: filter.from } : {}),
              ...(filter.to ? { lt: filter.to } : {}),
            },
          }
        : {}),
    };
    const [rows, total] = await Promise.all([
      this.prisma.auditLog.findMany({ where, orderBy: { id: 'desc' }, ...page }),
      this.prisma.auditLog.count({ where }),
    ]);
    return { rows, total };
  }
}
