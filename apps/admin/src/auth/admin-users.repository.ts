import { Injectable } from '@nestjs/common';
import { PrismaService, type AdminRole, type AdminUser, type Prisma } from '@switchyard/db';
import { type Db } from '../common/db.js';

// One advisory lock serialises the changes that must keep an invariant over all
// administrators: "there is a first administrator" and "an enabled owner remains".
const ADMIN_USERS_LOCK = 0x5359_4144; // "SYAD"

@Injectable()
export class AdminUsersRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Runs `work` in a transaction holding the administrators' lock. */
  async withAdminsLocked<T>(work: (db: Db) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(async (db) => {
      await db.$executeRaw`SELECT pg_advisory_xact_lock(${ADMIN_USERS_LOCK}::bigint)`;
      return work(db);
    });
  }

  findByUsername(username: string): Promise<AdminUser | null> {
    return this.prisma.adminUser.findUnique({ where: { username } });
  }

  findById(id: number, db: Db = this.prisma): Promise<AdminUser | null> {
    return db.adminUser.findUnique({ where: { id } });
  }

  count(db: Db = this.prisma): Promise<number> {
    return db.adminUser.count();
  }

  countEnabledOwners(db: Db): Promise<number> {
    return db.adminUser.count({ where: { role: 'owner', disabled: false } });
  }

  create(
    db: Db,
    data: { username: string; passwordHash: string; role: AdminRole; mustChangePassword: boolean },
  ): Promise<AdminUser> {
    return db.adminUser.create({ data });
  }

  async listByUsername(page: {
    skip: number;
    take: number;
  }): Promise<{ rows: AdminUser[]; total: number }> {
    const [rows, total] = await Promise.all([
      this.prisma.adminUser.findMany({ orderBy: { username: 'asc' }, ...page }),
      this.prisma.adminUser.count(),
    ]);
    return { rows, total };
  }

  update(db: Db, id: number, data: Prisma.AdminUserUpdateInput): Promise<AdminUser> {
    return db.adminUser.update({ where: { id }, data });
  }

  async delete(db: Db, id: number): Promise<void> {
    await db.adminUser.delete({ where: { id } });
  }
}
