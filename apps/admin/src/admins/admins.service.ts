import { Injectable } from '@nestjs/common';
import { LoginThrottle, SessionStore } from '@switchyard/auth';
import { ApiError } from '@switchyard/contracts';
import { isUniqueViolation, type AdminUser, type Prisma } from '@switchyard/db';
import { hashPassword } from '@switchyard/security';
import { AuditService } from '../audit/audit.service.js';
import { AdminUsersRepository } from '../auth/admin-users.repository.js';
import { type Actor } from '../common/actor.js';
import { type Db } from '../common/db.js';
import { type PageQuery } from '../common/pagination.js';
import { skipTake, type Page } from '@switchyard/service';
import { type AdminResponse, type CreateAdminDto, type UpdateAdminDto } from './admins.dto.js';

/** Administrators, managed by owners. At least one enabled owner always remains. */
@Injectable()
export class AdminsService {
  constructor(
    private readonly admins: AdminUsersRepository,
    private readonly sessions: SessionStore,
    private readonly throttle: LoginThrottle,
    private readonly audit: AuditService,
  ) {}

  async list(query: PageQuery): Promise<Page<AdminResponse>> {
    const { rows, total } = await this.admins.listByUsername(skipTake(query));
    return { items: rows.map(toAdminResponse), total };
  }

  async get(id: number): Promise<AdminResponse> {
    return toAdminResponse(await this.existing(id));
  }

  async create(actor: Actor, dto: CreateAdminDto): Promise<AdminResponse> {
    const passwordHash = await hashPassword(dto.password);
    try {
      const admin = await this.admins.withAdminsLocked(async (db) => {
        const created = await this.admins.create(db, {
          username: dto.username,
          passwordHash,
          role: dto.role,
          mustChangePassword: true,
        });
        await this.audit.record(
          {
            actor,
            action: 'admin.create',
            target: { type: 'admin', id: created.id },
            details: { username: created.username, role: created.role },
          },
          db,
        );
        return created;
      });
      return toAdminResponse(admin);
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw new ApiError('conflict', `An administrator named "${dto.username}" already exists`);
      }
      throw error;
    }
  }

  async update(actor: Actor, id: number, dto: UpdateAdminDto): Promise<AdminResponse> {
    const passwordHash = dto.password === undefined ? undefined : await hashPassword(dto.password);
    const { admin, before } = await this.admins.withAdminsLocked(async (db) => {
      const current = await this.existing(id, db);
      const data: Prisma.AdminUserUpdateInput = {
        ...(dto.role !== undefined ? { role: dto.role } : {}),
        ...(dto.disabled !== undefined ? { disabled: dto.disabled } : {}),
        ...(passwordHash !== undefined ? { passwordHash, mustChangePassword: true } : {}),
      };
      const updated = await this.admins.update(db, id, data);
      await this.assertOwnerRemains(db, current);
      await this.audit.record(
        {
          actor,
          action: 'admin.update',
          target: { type: 'admin', id },
          details: {
            ...(dto.role !== undefined ? { role: { from: current.role, to: dto.role } } : {}),
            ...(dto.disabled !== undefined ? { disabled: dto.disabled } : {}),
            ...(passwordHash !== undefined ? { passwordReset: true } : {}),
          },
        },
        db,
      );
      return { admin: updated, before: current };
    });
    // A new role, a disabled account or a reset password ends the sessions it had.
    if (admin.role !== before.role || (admin.disabled && !before.disabled) || passwordHash) {
      await this.sessions.endAll(id);
    }
    // A reset password is the owner's way back in: failures counted against the old one
    // must not keep the new one waiting.
    if (passwordHash) await this.throttle.unlock(admin.username);
    return toAdminResponse(admin);
  }

  async delete(actor: Actor, id: number): Promise<void> {
    if (actor.id === id) {
      throw new ApiError('conflict', 'You cannot delete your own account; ask another owner');
    }
    await this.admins.withAdminsLocked(async (db) => {
      const current = await this.existing(id, db);
      await this.admins.delete(db, id);
      await this.assertOwnerRemains(db, current);
      await this.audit.record(
        {
          actor,
          action: 'admin.delete',
          target: { type: 'admin', id },
          details: { username: current.username, role: current.role },
        },
        db,
      );
    });
    await this.sessions.endAll(id);
  }

  /** Run after the change, inside its transaction: refusing rolls the change back. */
  private async assertOwnerRemains(db: Db, before: AdminUser): Promise<void> {
    if (before.role !== 'owner' || before.disabled) return;
    if ((await this.admins.countEnabledOwners(db)) === 0) {
      throw new ApiError('conflict', 'At least one enabled owner must remain');
    }
  }

  private async existing(id: number, db?: Db): Promise<AdminUser> {
    const admin = await this.admins.findById(id, db);
    if (!admin) throw new ApiError('not_found', `No administrator with id ${id}`);
    return admin;
  }
}

function toAdminResponse(admin: AdminUser): AdminResponse {
  return {
    id: admin.id,
    username: admin.username,
    role: admin.role,
    mustChangePassword: admin.mustChangePassword,
    disabled: admin.disabled,
    createdAt: admin.createdAt,
    updatedAt: admin.updatedAt,
  };
}
