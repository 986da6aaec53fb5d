import { Module } from '@nestjs/common';
import { TokenAuthenticator } from './token-authenticator.js';
import { TokenDirectory } from './token-directory.js';
import { TokenEventsController } from './token-events.controller.js';

@Module({
  controllers: [TokenEventsController],
  providers: [TokenDirectory, TokenAuthenticator],
  exports: [TokenAuthenticator, TokenDirectory],
})
export class AuthModule {}
