import { Module, type Provider } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { LoginThrottle, SessionStore } from '@switchyard/auth';
import { AdminEnv } from '@switchyard/config';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { AuditModule } from '../audit/audit.module.js';
import { AccessGuard } from './access.guard.js';
import { AdminUsersRepository } from './admin-users.repository.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { FirstAdministrator } from './first-admin.js';

/**
 * Administrators' records, sessions and sign-in throttle, as the API and the CLI both need
 * them: the CLI's password reset and unlock must act on the very keys the API reads.
 */
export const ADMIN_ACCOUNT_PROVIDERS: Provider[] = [
  AdminUsersRepository,
  {
    provide: SessionStore,
    useFactory: (redis: RedisClient, env: AdminEnv) =>
      new SessionStore(redis, { namespace: 'admin', ttlSeconds: env.SESSION_TTL_SECONDS }),
    inject: [REDIS, AdminEnv],
  },
  {
    provide: LoginThrottle,
    useFactory: (redis: RedisClient, env: AdminEnv) =>
      new LoginThrottle(redis, {
        namespace: 'admin',
        freeFailuresPerAccountAddress: env.LOGIN_MAX_FAILURES_PER_ACCOUNT,
        freeFailuresPerAddress: env.LOGIN_MAX_FAILURES_PER_IP,
        accountCeiling: env.LOGIN_ACCOUNT_CEILING,
        firstDelaySeconds: env.LOGIN_FIRST_DELAY_SECONDS,
        maxDelaySeconds: env.LOGIN_MAX_DELAY_SECONDS,
      }),
    inject: [REDIS, AdminEnv],
  },
];

@Module({
  imports: [AuditModule],
  controllers: [AuthController],
  providers: [
    ...ADMIN_ACCOUNT_PROVIDERS,
    AuthService,
    FirstAdministrator,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [AdminUsersRepository, SessionStore, LoginThrottle],
})
export class AuthModule {}
