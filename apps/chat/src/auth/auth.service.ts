import { Injectable, Logger } from '@nestjs/common';
import { LoginThrottle, SessionStore } from '@switchyard/auth';
import { ApiError } from '@switchyard/contracts';
import { isUniqueViolation } from '@switchyard/db';
import { hashPassword, verifyPassword } from '@switchyard/security';
import { CreditsService } from '../credits/credits.service.js';
import { InvitationsService } from '../credits/invitations.service.js';
import { UsersRepository } from '../users/users.repository.js';
import { toPrincipal, toProfile } from '../users/users.mapper.js';
import {
  type LoginDto,
  type RegisterDto,
  type SessionResponse,
  type UserProfileResponse,
} from './auth.dto.js';
import { type Principal } from './principal.js';

@Injectable()
export class AuthService {
  private readonly logger = new Logger(AuthService.name);
  /** Verified against when the username is unknown, so both cases take as long. */
  private decoyHash: Promise<string> | undefined;

  constructor(
    private readonly users: UsersRepository,
    private readonly sessions: SessionStore,
    private readonly throttle: LoginThrottle,
    private readonly credits: CreditsService,
    private readonly invitations: InvitationsService,
  ) {}

  async register(dto: RegisterDto, clientAddress: string): Promise<UserProfileResponse> {
    await this.assertAvailable(dto.username, dto.email);
    // A link that does not work is refused before the account exists.
    const inviterId =
      dto.invite === undefined ? null : await this.invitations.inviterFor(dto.invite);
    const passwordHash = await hashPassword(dto.password);
    try {
      const user = await this.users.createUser({
        username: dto.username,
        email: dto.email ?? null,
        passwordHash,
      });
      this.logger.log({ message: 'user registered', userId: user.id });
      await this.credits.grantAtRegistration(user.id);
      if (inviterId !== null) await this.invitations.record(user.id, inviterId, clientAddress);
      return toProfile(user);
    } catch (error) {
      // Someone registered the same name or email in the meantime.
      if (isUniqueViolation(error)) await this.assertAvailable(dto.username, dto.email);
      throw error;
    }
  }

  private async assertAvailable(username: string, email: string | undefined): Promise<void> {
    if (await this.users.findByUsername(username)) {
      throw new ApiError('username_taken', `The username "${username}" is already taken`);
    }
    if (email !== undefined && (await this.users.emailTaken(email))) {
      throw new ApiError('email_taken', 'An account with this email already exists');
    }
  }

  async login(dto: LoginDto, clientAddress: string): Promise<SessionResponse> {
    const attempt = await this.throttle.begin(dto.username, clientAddress);
    const user = await this.users.findByUsername(dto.username);
    const matches = user
      ? await verifyPassword(dto.password, user.passwordHash)
      : await verifyPassword(dto.password, await this.decoy()).then(() => false);
    if (!user || !matches) {
      throw new ApiError('invalid_credentials', 'Wrong username or password');
    }
    // The right password is no guess, even for a disabled account.
    await attempt.succeeded();
    if (user.disabled) {
      throw new ApiError('user_disabled', 'This account is disabled; contact an administrator');
    }
    const session = await this.sessions.issue(user.id);
    return { token: session.token, expiresAt: session.expiresAt.toISOString() };
  }

  async logout(principal: Principal): Promise<void> {
    await this.sessions.end(principal.id, principal.sessionHash);
  }

  /** The user behind a bearer token; 401 for no or a dead session, 403 for a disabled user. */
  async authenticate(token: string | undefined): Promise<Principal> {
    const session = await this.sessions.find(token);
    if (!session) {
      throw new ApiError(
        'unauthenticated',
        token ? 'The session has expired or was ended; sign in again' : 'Sign in first',
      );
    }
    const user = await this.users.findById(session.subject);
    if (!user) {
      await this.sessions.end(session.subject, session.hash);
      throw new ApiError('unauthenticated', 'The session has expired or was ended; sign in again');
    }
    if (user.disabled) {
      await this.sessions.endAll(user.id);
      throw new ApiError('user_disabled', 'This account is disabled; contact an administrator');
    }
    return toPrincipal(user, session.hash);
  }

  async profile(principal: Principal): Promise<UserProfileResponse> {
    const user = await this.users.findById(principal.id);
    if (!user) throw new ApiError('unauthenticated', 'Sign in again');
    return toProfile(user);
  }

  private decoy(): Promise<string> {
    this.decoyHash ??= hashPassword('decoy password that matches nobody');
    return this.decoyHash;
  }
}
