import { Module } from '@nestjs/common';
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

@Module({
  imports: [AuditModule],
  controllers: [AuthController],
  providers: [
    AdminUsersRepository,
    AuthService,
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
          maxFailuresPerAccount: env.LOGIN_MAX_FAILURES_PER_ACCOUNT,
          maxFailuresPerAddress: env.LOGIN_MAX_FAILURES_PER_IP,
          windowSeconds: env.LOGIN_FAILURE_WINDOW_SECONDS,
        }),
      inject: [REDIS, AdminEnv],
    },
    FirstAdministrator,
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [AdminUsersRepository, SessionStore],
})
export class AuthModule {}
