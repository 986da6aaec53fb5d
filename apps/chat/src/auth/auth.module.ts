import { Module } from '@nestjs/common';
import { LoginThrottle, SessionStore } from '@switchyard/auth';
import { ChatEnv } from '@switchyard/config';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { CreditsModule } from '../credits/credits.module.js';
import { UsersRepository } from '../users/users.repository.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { FirstAdmin } from './first-admin.js';
import { SessionGuard } from './session.guard.js';

@Module({
  imports: [CreditsModule],
  controllers: [AuthController],
  providers: [
    UsersRepository,
    {
      provide: SessionStore,
      useFactory: (redis: RedisClient, env: ChatEnv) =>
        new SessionStore(redis, { namespace: 'chat', ttlSeconds: env.SESSION_TTL_SECONDS }),
      inject: [REDIS, ChatEnv],
    },
    {
      provide: LoginThrottle,
      useFactory: (redis: RedisClient, env: ChatEnv) =>
        new LoginThrottle(redis, {
          namespace: 'chat',
          freeFailuresPerAccountAddress: env.LOGIN_MAX_FAILURES_PER_ACCOUNT,
          freeFailuresPerAddress: env.LOGIN_MAX_FAILURES_PER_IP,
          accountCeiling: env.LOGIN_ACCOUNT_CEILING,
          firstDelaySeconds: env.LOGIN_FIRST_DELAY_SECONDS,
          maxDelaySeconds: env.LOGIN_MAX_DELAY_SECONDS,
        }),
      inject: [REDIS, ChatEnv],
    },
    AuthService,
    SessionGuard,
    FirstAdmin,
  ],
  exports: [UsersRepository, SessionStore, AuthService, SessionGuard],
})
export class AuthModule {}
