import { Injectable, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { REDIS, type RedisClient } from '@switchyard/messaging';
import { AccountLimiter } from '@switchyard/limiter';
import { SecretCipher } from '@switchyard/security';
import { KeyVault } from './key-vault.js';
import { RoutingSnapshotController, RoutingState } from './routing-state.js';

/**
 * Gives back what the edge held of its accounts' limits ahead of demand, and the leases
 * still waiting for their batch, after the last request.
 */
@Injectable()
class LeaseReturn implements OnApplicationShutdown {
  constructor(private readonly limiter: AccountLimiter) {}

  onApplicationShutdown(): Promise<void> {
    return this.limiter.close();
  }
}

@Module({})
export class RoutingModule {
  static forRoot(secretKeys: string[]): DynamicModule {
    return {
      module: RoutingModule,
      controllers: [RoutingSnapshotController],
      providers: [
        RoutingState,
        { provide: SecretCipher, useFactory: () => new SecretCipher(secretKeys) },
        KeyVault,
        LeaseReturn,
        {
          provide: AccountLimiter,
          useFactory: (redis: RedisClient) => new AccountLimiter(redis),
          inject: [REDIS],
        },
      ],
      exports: [RoutingState, KeyVault, AccountLimiter],
    };
  }
}
