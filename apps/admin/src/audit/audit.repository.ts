import { Injectable } from '@nestjs/common';
import { PrismaService, type AuditLog, type Prisma } from '@switchyard/db';
import { type Db } from '../common/db.js';

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

  async append(entry: Prisma.AuditLogUncheckedCreateInput, db: Db = this.prisma): Promise<void> {
    await db.auditLog.create({ data: entry });
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
