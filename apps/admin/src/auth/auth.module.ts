import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AdminEnv } from '@switchyard/config';
import { AuditModule } from '../audit/audit.module.js';
import { AccessGuard } from './access.guard.js';
import { AdminUsersRepository } from './admin-users.repository.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { ClientAddressResolver } from './client-address.js';
import { FirstAdministrator } from './first-admin.js';
import { LoginThrottle } from './login-throttle.js';
import { SessionStore } from './session-store.js';

@Module({
  imports: [AuditModule],
  controllers: [AuthController],
  providers: [
    AdminUsersRepository,
    AuthService,
    SessionStore,
    LoginThrottle,
    FirstAdministrator,
    { provide: APP_GUARD, useClass: AccessGuard },
    {
      provide: ClientAddressResolver,
      useFactory: (env: AdminEnv) => new ClientAddressResolver(env.TRUSTED_PROXIES),
      inject: [AdminEnv],
    },
  ],
  exports: [AdminUsersRepository, SessionStore],
})
export class AuthModule {}
