import { Module } from '@nestjs/common';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { SpendLedger } from '@switchyard/spend';
import { TokenAuthenticator } from './token-authenticator.js';
import { TokenDirectory } from './token-directory.js';
import { TokenEventsController } from './token-events.controller.js';
import { TokensRepository } from './tokens.repository.js';

@Module({
  controllers: [TokenEventsController],
  providers: [
    TokensRepository,
    TokenDirectory,
    TokenAuthenticator,
    {
      provide: SpendLedger,
      useFactory: (redis: RedisClient) => new SpendLedger(redis),
      inject: [REDIS],
    },
  ],
  exports: [TokenAuthenticator, TokenDirectory, TokensRepository, SpendLedger],
})
export class AuthModule {}
