import { Module } from '@nestjs/common';
import { LoginThrottle, SessionStore } from '@switchyard/auth';
import { ChatEnv } from '@switchyard/config';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { UsersRepository } from '../users/users.repository.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { FirstAdmin } from './first-admin.js';
import { SessionGuard } from './session.guard.js';

@Module({
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
          maxFailuresPerAccount: env.LOGIN_MAX_FAILURES_PER_ACCOUNT,
          maxFailuresPerAddress: env.LOGIN_MAX_FAILURES_PER_IP,
          windowSeconds: env.LOGIN_FAILURE_WINDOW_SECONDS,
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
