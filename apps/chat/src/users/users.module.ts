import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { ModelsModule } from '../models/models.module.js';
import { UsersController } from './users.controller.js';
import { UsersService } from './users.service.js';

@Module({
  imports: [AuthModule, ModelsModule],
  controllers: [UsersController],
  providers: [UsersService],
})
export class UsersModule {}
