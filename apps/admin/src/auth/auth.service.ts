import { Injectable, Logger } from '@nestjs/common';
import { LoginThrottle, SessionStore } from '@switchyard/auth';
import { ApiError } from '@switchyard/contracts';
import { type AdminUser } from '@switchyard/db';
import { hashPassword, verifyPassword } from '@switchyard/security';
import { randomBytes } from 'node:crypto';
import { AuditService } from '../audit/audit.service.js';
import { actorOf, type AdminPrincipal } from '../common/actor.js';
import { AdminUsersRepository } from './admin-users.repository.js';
import {
  type AdminProfile,
  type ChangePasswordDto,
  type LoginDto,
  type LoginResponse,
  type PasswordChangedResponse,
  type SessionsEndedResponse,
} from './auth.dto.js';

@Injectable()
export class AuthService {
  private readonly logger = new Logger('AuthService');
  /** Verified against when the username is unknown, so both failures take as long. */
  private decoyHash?: Promise<string>;

  constructor(
    private readonly admins: AdminUsersRepository,
    private readonly sessions: SessionStore,
    private readonly throttle: LoginThrottle,
    private readonly audit: AuditService,
  ) {}

  async login(dto: LoginDto, clientIp: string): Promise<LoginResponse> {
    const attempt = await this.throttle.begin(dto.username, clientIp);
    const admin = await this.admins.findByUsername(dto.username);
    const valid = await verifyPassword(dto.password, admin?.passwordHash ?? (await this.decoy()));
    if (!admin || !valid) {
      await this.audit.record({
        actor: admin
          ? { id: admin.id, name: admin.username, clientIp }
          : { id: null, name: '(unknown user)', clientIp },
        action: 'auth.login_failed',
        target: { type: 'admin', id: admin?.id ?? null },
      });
      this.logger.warn({ message: 'failed login', clientIp, knownUser: admin !== null });
      throw new ApiError('invalid_credentials', 'Invalid username or password');
    }
    // The right password is no guess, even for a disabled account.
    await attempt.succeeded();
    if (admin.disabled) {
      throw new ApiError('forbidden', 'This administrator account is disabled');
    }
    const session = await this.sessions.issue(admin.id);
    await this.audit.record({
      actor: { id: admin.id, name: admin.username, clientIp },
      action: 'auth.login',
      target: { type: 'admin', id: admin.id },
    });
    return {
      token: session.token,
      mustChangePassword: admin.mustChangePassword,
      expiresAt: session.expiresAt,
      admin: toAdminProfile(admin),
    };
  }

  async logout(admin: AdminPrincipal, clientIp: string): Promise<void> {
    await this.sessions.end(admin.id, admin.sessionHash);
    await this.audit.record({
      actor: actorOf(admin, clientIp),
      action: 'auth.logout',
      target: { type: 'admin', id: admin.id },
    });
  }

  /** Ends every session of this administrator, this one included (a lost laptop). */
  async logoutEverywhere(admin: AdminPrincipal, clientIp: string): Promise<SessionsEndedResponse> {
    const revokedSessions = await this.sessions.endAll(admin.id);
    await this.audit.record({
      actor: actorOf(admin, clientIp),
      action: 'auth.logout_everywhere',
      target: { type: 'admin', id: admin.id },
      details: { revokedSessions },
    });
    return { revokedSessions };
  }

  /** Sets a new password, clears the forced change, and ends every other session. */
  async changePassword(
    principal: AdminPrincipal,
    dto: ChangePasswordDto,
    clientIp: string,
  ): Promise<PasswordChangedResponse> {
    // A stolen session must not become a way around the sign-in throttle.
    const attempt = await this.throttle.begin(principal.username, clientIp);
    const admin = await this.admins.findById(principal.id);
    if (!admin) throw new ApiError('unauthenticated', 'This administrator no longer exists');
    if (!(await verifyPassword(dto.currentPassword, admin.passwordHash))) {
      const message = 'currentPassword is not the current password';
      throw new ApiError('validation_failed', message, [{ field: 'currentPassword', message }]);
    }
    await attempt.succeeded();
    if (dto.newPassword === dto.currentPassword || dto.newPassword === admin.username) {
      const message = 'newPassword must differ from the current password and the username';
      throw new ApiError('validation_failed', message, [{ field: 'newPassword', message }]);
    }
    const passwordHash = await hashPassword(dto.newPassword);
    await this.admins.withAdminsLocked(async (db) => {
      await this.admins.update(db, admin.id, { passwordHash, mustChangePassword: false });
      await this.audit.record(
        {
          actor: actorOf(principal, clientIp),
          action: 'auth.password_change',
          target: { type: 'admin', id: admin.id },
        },
        db,
      );
    });
    const revokedSessions = await this.sessions.endAll(admin.id, principal.sessionHash);
    return { revokedSessions };
  }

  /** The administrator behind a bearer token, or null when it is not a live session. */
  async authenticate(token: string | undefined): Promise<AdminPrincipal | null> {
    const session = await this.sessions.find(token);
    if (session === null) return null;
    const admin = await this.admins.findById(session.subject);
    if (!admin || admin.disabled) return null;
    return {
      id: admin.id,
      username: admin.username,
      role: admin.role,
      mustChangePassword: admin.mustChangePassword,
      sessionHash: session.hash,
    };
  }

  async profile(principal: AdminPrincipal): Promise<AdminProfile> {
    const admin = await this.admins.findById(principal.id);
    if (!admin) throw new ApiError('unauthenticated', 'This administrator no longer exists');
    return toAdminProfile(admin);
  }

  private decoy(): Promise<string> {
    this.decoyHash ??= hashPassword(randomBytes(16).toString('hex'));
    return this.decoyHash;
  }
}

export function toAdminProfile(admin: AdminUser): AdminProfile {
  return {
    id: admin.id,
    username: admin.username,
    role: admin.role,
    mustChangePassword: admin.mustChangePassword,
  };
}
