import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AdminEnv } from '@switchyard/config';
import { hashPassword } from '@switchyard/security';
import { AuditService } from '../audit/audit.service.js';
import { SYSTEM_ACTOR } from '../common/actor.js';
import { AdminUsersRepository } from './admin-users.repository.js';

/**
 * At start, when no administrator exists, creates the first one from `ADMIN_USERNAME` /
 * `ADMIN_PASSWORD` as an owner who must change the password at first login
 * (docs/specification.md, "Users and administrators").
 * Replicas starting together serialise on an advisory lock, so exactly one creates it.
 */
@Injectable()
export class FirstAdministrator implements OnApplicationBootstrap {
  private readonly logger = new Logger('FirstAdministrator');

  constructor(
    private readonly env: AdminEnv,
    private readonly admins: AdminUsersRepository,
    private readonly audit: AuditService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.ensure();
  }

  /** True when this call created the administrator. */
  async ensure(): Promise<boolean> {
    const { ADMIN_USERNAME: username, ADMIN_PASSWORD: password } = this.env;
    if ((await this.admins.count()) > 0) return false;
    if (!username || !password) {
      this.logger.warn(
        'no gateway administrator exists and ADMIN_USERNAME / ADMIN_PASSWORD are not both set: nobody can log in',
      );
      return false;
    }
    const passwordHash = await hashPassword(password);
    const created = await this.admins.withAdminsLocked(async (db) => {
      if ((await this.admins.count(db)) > 0) return null;
      const admin = await this.admins.create(db, {
        username,
        passwordHash,
        role: 'owner',
        mustChangePassword: true,
      });
      await this.audit.record(
        {
          actor: SYSTEM_ACTOR,
          action: 'admin.bootstrap',
          target: { type: 'admin', id: admin.id },
          details: { username, role: 'owner' },
        },
        db,
      );
      return admin;
    });
    if (created) {
      this.logger.log({
        message:
          'created the first gateway administrator; the password must be changed at first login',
        username,
      });
    }
    return created !== null;
  }
}
