import { Module } from '@nestjs/common';
import { UsersRepository } from '../users/users.repository.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { FirstAdmin } from './first-admin.js';
import { LoginThrottle } from './login-throttle.js';
import { SessionGuard } from './session.guard.js';
import { SessionStore } from './session.store.js';

@Module({
  controllers: [AuthController],
  providers: [UsersRepository, SessionStore, LoginThrottle, AuthService, SessionGuard, FirstAdmin],
  exports: [UsersRepository, SessionStore, AuthService, SessionGuard],
})
export class AuthModule {}
