import { Injectable, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { SpendBlocks, SpendLedger } from '@switchyard/spend';
import { TokenAuthenticator } from './token-authenticator.js';
import { TokenDirectory } from './token-directory.js';
import { TokenEventsController } from './token-events.controller.js';
import { TokensRepository } from './tokens.repository.js';

/**
 * Gives back, after the last request, what this edge held of its tokens' quotas and budgets
 * ahead of demand, so another replica may spend it at once (docs/architecture.md, "Spend
 * blocks").
 */
@Injectable()
class BlockReturn implements OnApplicationShutdown {
  constructor(private readonly blocks: SpendBlocks) {}

  onApplicationShutdown(): Promise<void> {
    return this.blocks.close();
  }
}

const blockLogger = new Logger('SpendBlocks');

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
    {
      provide: SpendBlocks,
      useFactory: (ledger: SpendLedger) =>
        new SpendBlocks(ledger, (error) =>
          blockLogger.warn(`a block's rest was not given back (it expires): ${error.message}`),
        ),
      inject: [SpendLedger],
    },
    BlockReturn,
  ],
  exports: [TokenAuthenticator, TokenDirectory, TokensRepository, SpendLedger, SpendBlocks],
})
export class AuthModule {}
